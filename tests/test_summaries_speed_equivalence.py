"""The single-walk collectors of ``summaries`` give what the former one-pass-per-collector
code gave: the same nodes in the same order (``ast.walk``'s, which fixes the order of
same-line calls and of every list in a summary), and the same summary of a module
that uses most of the syntax the collectors read. EXPECTED was made by the former code.
"""

import ast
import json
import sys
from pathlib import Path

import pytest

from mplint.run.summaries import _Nodes, summarize

SNIPPET = '''
import os.path, numpy as np
from . import sibling
from ..pkg import thing as other
from ..star import *
import tensorflow as tf

@decorate(make_decorator())
class Trainer(base.Model, metaclass=Meta):
    optimizer_cls = tf.keras.optimizers.Adam

    def __init__(self, model, config):
        super().__init__(name="trainer")
        self.model = model
        self.head = layers.Dense(4)
        self.opt = build_optimizer(config)
        self.layers = [Block(i) for i in range(3)]

    @staticmethod
    def make(a, b, *rest, **extra):
        m = Net(a); n: Net = make_net(b)
        m.fit(x, y); n.trainable_variables
        return m

    def train(self):
        opt = self.opt; opt = wrap(opt)
        self.model.fit(data(), epochs=3, optimizer=opt, **kwargs)
        tf.keras.mixed_precision.set_global_policy(Policy("mixed_float16"))
        go(first(a), second(b)), go(third(c))
        return self.model

if cond:
    def helper(x):
        return (y := compute(x)) or {**base, "k": load(x)}
match command:
    case Point(x=0, y=yy) if yy > 0:
        run(yy)
    case {"k": v, **others}:
        run(v)
    case [1, *rest]:
        run(rest)

def main(argv):
    global state
    trainer = Trainer(make_model(), cfg)
    trainer.train()
    lambda q: q.evaluate()
    print(f"{trainer!r:>10} {[t.fit() for t in trainers]}")
    async def inner():
        async with ctx() as c:
            await c.fit(ds)
    app.run(main, flags=absl.flags)
    return tf.distribute.run(step, args=(batch,))

if __name__ == "__main__":
    app.run(main)
'''

EXPECTED = (
    [4, True, {'os': 'os', 'np': 'numpy', 'sibling': '.sibling', 'other': '..pkg.thing', 'tf': 'tensorflow'},
     {'Trainer.__init__': [[[13, 'super#__init__'], [13, 'super'], [15, 'layers.Dense'], [16, 'build_optimizer'],
                            [16, 'config'], [17, 'Block'], [17, 'i'], [17, 'range']],
                           [], ['model', 'config'], [], [],
                           [['layers.Dense', '0', '?'], ['build_optimizer', '0', 'param:config'],
                            ['Block', '0', '?'], ['range', '0', '?']]],
      'Trainer.make': [[[21, 'Net'], [21, 'a'], [21, 'make_net'], [21, 'b'], [22, 'Net#fit'], [22, 'x'],
                        [22, 'y']],
                       [], ['a', 'b'], ['Net'], ['Net', 'make_net'],
                       [['Net', '0', 'param:a'], ['make_net', '0', 'param:b'], ['Net#fit', '0', '?'],
                        ['Net#fit', '1', '?']]],
      'Trainer.train': [[[26, 'wrap'], [26, 'opt'], [27, 'self.model.fit'], [27, 'opt'], [27, 'kwargs'],
                         [27, 'data'], [28, 'tf.keras.mixed_precision.set_global_policy'], [28, 'Policy'],
                         [29, 'go'], [29, 'go'], [29, 'first'], [29, 'a'], [29, 'second'], [29, 'b'],
                         [29, 'third'], [29, 'c']],
                        [[28, 'mixed_float16']], [], ['?'], ['self.model'],
                        [['wrap', '0', '?'], ['self.model.fit', '*', '?'], ['self.model.fit', '0', 'data'],
                         ['self.model.fit', 'epochs', '?'], ['self.model.fit', 'optimizer', '?'],
                         ['self.model.fit', 'optimizer', 'wrap'],
                         ['tf.keras.mixed_precision.set_global_policy', '0', 'Policy'], ['Policy', '0', '?'],
                         ['go', '0', 'first'], ['go', '1', 'second'], ['go', '0', 'third'], ['first', '0', '?'],
                         ['second', '0', '?'], ['third', '0', '?']]],
      '<module>': [[[2, 'import:os.path'], [2, 'import:numpy'], [3, 'import:.'], [4, 'import:..pkg'],
                    [5, 'import:..star'], [6, 'import:tensorflow'], [8, 'decorate'], [8, 'make_decorator'],
                    [34, 'compute'], [34, 'x'], [34, 'load'], [34, 'x'], [37, 'run'], [37, 'yy'], [39, 'run'],
                    [39, 'v'], [41, 'run'], [41, 'rest'], [56, 'app.run'], [56, 'main']],
                   [], [], ['?'], [],
                   [['decorate', '0', 'make_decorator'], ['compute', '0', '?'], ['load', '0', '?'],
                    ['run', '0', '?'], ['run', '0', '?'], ['run', '0', '?'], ['app.run', '0', '?']]],
      'main': [[[45, 'Trainer'], [45, 'cfg'], [45, 'make_model'], [46, 'Trainer#train'], [47, 'q.evaluate'],
                [48, 'print'], [48, 't.fit'], [50, 'ctx'], [51, 'c.fit'], [51, 'ds'], [52, 'app.run'],
                [52, 'main'], [52, 'absl.flags'], [53, 'tf.distribute.run'], [53, 'step']],
               [], ['argv'], ['tf.distribute.run'], [],
               [['Trainer', '0', 'make_model'], ['Trainer', '1', '?'], ['print', '0', '?'], ['c.fit', '0', '?'],
                ['app.run', '0', '?'], ['app.run', 'flags', '?'], ['tf.distribute.run', '0', '?'],
                ['tf.distribute.run', 'args', '?']]]},
     {'Trainer': [['base.Model'], ['__init__', 'make', 'train'], {'head': 'layers.Dense', 'layers': 'Block'},
                  {'model': 'param:model', 'head': 'layers.Dense', 'opt': 'build_optimizer'}]}])

#: SNIPPET has a ``match`` statement
NEEDS_MATCH = pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements parse from Python 3.10")

KINDS = {ast.Assign: "assigns", ast.AnnAssign: "assigns", ast.Call: "events", ast.Import: "events",
         ast.ImportFrom: "events", ast.Name: "names", ast.Return: "returns", ast.Attribute: "attributes"}


def _by_walk(body):
    """The buckets as ``ast.walk`` over each statement fills them, less the returns of the
    functions defined inside (a closure's return is not the code's own)."""
    found = {name: [] for name in set(KINDS.values())}
    nested = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if type(node) in KINDS:
                found[KINDS[type(node)]].append(node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                nested |= {id(inner) for part in node.body for inner in ast.walk(part) if isinstance(inner, ast.Return)}
    found["returns"] = [node for node in found["returns"] if id(node) not in nested]
    return found


def _same_nodes(body):
    nodes = _Nodes(body)
    for bucket, expected in _by_walk(body).items():
        assert [id(n) for n in getattr(nodes, bucket)] == [id(n) for n in expected], bucket


@NEEDS_MATCH
def test_one_walk_finds_the_nodes_ast_walk_finds_in_its_order():
    tree = ast.parse(SNIPPET)
    _same_nodes(tree.body)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            _same_nodes(node.body)
            _same_nodes(node.decorator_list)


def test_one_walk_matches_ast_walk_on_the_package_sources():
    for path in sorted(Path(__file__).resolve().parent.parent.joinpath("mplint").rglob("*.py")):
        _same_nodes(ast.parse(path.read_text(encoding="utf-8")).body)


@NEEDS_MATCH
def test_summary_is_the_one_the_former_collectors_made():
    """Less what they did not collect (version 5 adds each function's ``casts``, version 6
    its calls' ``arguments``, version 7 the module's ``registries``, version 8 its
    ``decorated`` definitions and registry ``writers``, version 9 the submodule each
    ``from pkg import name`` may run and the modules of star imports; version 10 leaves
    out a set that restores a policy read before; version 11 gives the ``__main__`` guard's
    code a function of its own: it is put back into the module's here; version 12 gives
    each call's ``arguments`` its line, and adds ``set_terms`` and ``defaults``, empty here;
    version 13 leaves out the returns of functions defined inside, here the module's
    ``helper`` under ``if cond:``: put back; version 14 gives every function its literal
    ``defaults`` and marks a call's keyword-only ``**`` spread among its ``arguments``;
    version 15 adds each function's ``escapes``: none here, as no method reads the class
    attribute ``optimizer_cls``, and the annotation ``n: Net``, the base ``base.Model``,
    ``metaclass=Meta`` and the pattern ``case Point(...)`` hand nothing on; version 16 names
    a local instance's method in ``passes`` as ``calls`` does, ``m.fit`` of ``m = Net(a)``
    as ``Net#fit``, and adds the callables each call hands on, ``handed``: dropped here;
    version 18 adds each return's written-out tuple ``parts``, none here, and names the
    parts of a call's result a name is bound to, none here either; version 19 adds the
    names policy sets are given, ``set_names``, and the module's string ``constants``:
    none here; version 20 writes numbers among a call's literal ``arguments``, left out
    here with them; version 21 adds each function's ``keyed_returns`` and the module's
    registries by key, ``keyed``: none here; version 22 the ``if`` tests around a setter's
    calls, ``guards``: dropped here; version 23 writes a float dtype among a call's
    ``arguments`` by its name, none here; version 24 adds the policies a set chooses by a
    parameter's truth, ``set_choices``: none here; version 25 adds each function's ``picks`` and
    each class's ``callables``, what its ``self.x`` attributes hold by name: dropped here;
    version 26 each return's literal ``part_values``: none here; version 27 each function's
    ``required`` parameters, which a call must bind; version 28 the fields set elsewhere;
    version 29 each function's ``named_arguments`` and ``return_terms``, and ``constants``
    any literal, as JSON: dropped here)."""
    data = summarize(SNIPPET).to_json()
    guard = data[3].pop("<main>")
    assert guard[0] == [(56, "app.run"), (56, "main")]
    body = data[3]["<module>"]
    for field in (0, 5, 7):
        body[field] += guard[field]
    assert body[3] == []
    body[3] = ["?"]  # the former code counted ``helper``'s return as the module's
    assert all(entry[10] == [] for entry in data[3].values())
    for entry in data[3].values():
        assert all(part == [] for part in entry[12]) and entry[13] == [] and entry[14] == []
        assert isinstance(entry[15], dict) and entry[16] == []
        assert entry[17] == [] and all(part == [] for part in entry[18])
        assert entry[8] == [] and all(isinstance(v, str) for v in entry[9].values())
        assert all(isinstance(p, str) for p in entry[19])
        entry[7] = [(callee, slots) for _, callee, slots in entry[7]]
        del entry[8:]
        # a tuple written out is passed element by element (``args@0``), where the former
        # collectors passed the whole of it as unknown, once per element
        entry[5] = [[callee, slot.partition("@")[0], "?"] if "@" in slot else [callee, slot, origin]
                    for callee, slot, origin in entry[5]]
    assert data[0] == 30 and all(entry[6] == [] for entry in data[3].values())
    for cls in data[4].values():
        assert isinstance(cls.pop(4), dict)  # what its attributes hold by name
    assert data.pop(10) == []  # attributes set on other objects
    assert data.pop(9) == {}  # registries by key
    assert data.pop(8) == {}  # literal constants
    assert data[2].pop("*..star") == "..star"
    module_calls = data[3]["<module>"][0]
    for added in ((3, "import:.sibling"), (4, "import:..pkg.thing")):
        module_calls.remove(added)
    del data[5:8]
    data[0] = 4
    for entry in data[3].values():
        del entry[6:8]
    made = json.dumps(data)
    assert json.loads(made) == EXPECTED
    # the same key order too: summaries are cached as JSON
    assert made == json.dumps(EXPECTED)
