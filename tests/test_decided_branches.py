"""An ``if`` arm decided by a constructor parameter stored on ``self``: silent only where
mplint sees every construction. A library module's public layer is built by its users,
who may pass the other value (``SelfAttention(history_only=True)``)."""

from __future__ import annotations

from helpers import fired

LAYER = ("import tensorflow as tf\n"
         "from tensorflow import keras\n"
         "from tensorflow.keras import backend as K\n\n\n"
         "class NAME(keras.layers.Layer):\n"
         "    def __init__(self, history_only=False, **kwargs):\n"
         "        super().__init__(**kwargs)\n"
         "        self.history_only = history_only\n\n"
         "    def call(self, e):\n"
         "        if self.history_only:\n"
         "            e -= 10000.0 * K.cast(e > 0, K.floatx())\n"
         "        return e\n")


def test_a_public_library_layer_may_be_built_with_the_other_value():
    found = fired(LAYER.replace("NAME", "Attention"), "MP504", assume_policy="mixed_float16")
    assert found == [(13, "MP504")]


def test_a_private_class_and_a_script_see_every_construction():
    assert fired(LAYER.replace("NAME", "_Attention"), "MP504", assume_policy="mixed_float16") == []
    script = LAYER.replace("NAME", "Attention") + "\nAttention()(tf.zeros((2, 3)))\n"
    assert fired(script, "MP504", assume_policy="mixed_float16") == []
    built = LAYER.replace("NAME", "Attention") + "\nAttention(history_only=True)(tf.zeros((2, 3)))\n"
    assert fired(built, "MP504", assume_policy="mixed_float16") == [(13, "MP504")]


def test_a_construction_hands_its_literal_arguments_as_the_program_model_writes_them():
    import libcst as cst

    from mplint.semantic.call_args import literal_slots

    call = cst.parse_expression('PatchEmbed((16, 16), 96, norm_layer=None, act="gelu", scale=dim, **kw)')
    assert isinstance(call, cst.Call)
    assert literal_slots(call) == {"0": "?", "1": "96", "norm_layer": "null", "act": '"gelu"', "scale": "?",
                                   "*": "?", "**": "?"}
