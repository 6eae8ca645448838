"""Time `check_model` on keras.applications.ResNet50(weights=None) on this machine.

    python benchmarks/runtime_resnet50.py [--policy mixed_bfloat16] [--batch-size 8] [--repeat 1]

Prints the wall time of whole checks (build, forward pass with every layer probed,
findings), and of the first one separately since it includes one-time tracing.
"""

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--policy", default=None, help="default: the hardware's")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--train-step", action="store_true")
    args = parser.parse_args()

    started = time.perf_counter()
    import tensorflow as tf

    from mplint.runtime import check_model

    print(f"import tensorflow: {time.perf_counter() - started:.1f} s (TF {tf.__version__})")

    def build():
        model = tf.keras.applications.ResNet50(weights=None)
        if args.train_step:
            model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        return model

    for i in range(args.repeat):
        t0 = time.perf_counter()
        report = check_model(build, args.policy, batch_size=args.batch_size, train_step=args.train_step)
        took = time.perf_counter() - t0
        print(f"run {i + 1}: {took:.1f} s  policy={report.policy} batch={args.batch_size} "
              f"layers={report.model['layers']} params={report.model['parameters']:,} "
              f"findings={[(f.rule, f.layer) for f in report.findings]}")


if __name__ == "__main__":
    main()
