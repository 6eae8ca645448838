"""Which calls create Keras layers or models, and which functions build them.

A dtype policy reaches a layer when the layer is constructed, so "the model was built
before the policy was set" (MP405) needs to know what builds one: a Keras layer or model
constructor, a pretrained model's loader, or a function whose body calls one
(``def build_model(): ...; return keras.Model(inputs, outputs)``). That function may be
another module's (``from model_zoo import build_model``): :func:`imported_builder` asks
this analysis walked in that module, so both are judged the same way.
"""

from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from mplint.analysis.imported_layers import analysed, imported_definition
from mplint.rule.check import Analysis, Context
from mplint.semantic.names import dotted_name
from mplint.semantic.vocabulary import INPUT_LAYERS, MODEL_FACTORIES

#: preprocessing layers: adapted before the model is built, harmless in float32
PREPROCESSING = frozenset({
    "Normalization", "Rescaling", "TextVectorization", "StringLookup", "IntegerLookup",
    "Discretization", "CategoryEncoding", "Hashing", "Resizing", "CenterCrop",
})
#: class methods that build a model from saved weights (Hugging Face, KerasHub)
_PRETRAINED = frozenset({"from_pretrained", "from_preset"})
#: what such a class method also builds that is not a model (no dtype policy to keep)
_NOT_MODELS = ("Tokenizer", "Processor", "Preprocessor", "Config", "FeatureExtractor", "Converter",
               "Vocab", "Pipeline")


def pretrained_model(call: cst.Call) -> bool:
    """``TFAutoModel.from_pretrained(...)``, ``MyBert.from_pretrained(...)``,
    ``keras_hub.models.GemmaCausalLM.from_preset(...)``: a model whose layers are
    built, under the policy in effect, when it loads (a tokenizer is not a model)."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in _PRETRAINED:
        return False
    owner = dotted_name(func.value)
    last = owner.rsplit(".", 1)[-1] if owner else ""
    return last[:1].isupper() and not any(word in last for word in _NOT_MODELS)


class ModelBuilders(Analysis):
    """The functions of a file whose bodies create Keras layers or models."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._functions: List[cst.FunctionDef] = []
        #: ids of the functions (and the functions around them) that create one
        self.builders: Set[int] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.pop()

    def visit_Call(self, node: cst.Call) -> None:
        if self._functions and self.creates(node):
            self.builders.update(id(f) for f in self._functions)

    def creates(self, call: cst.Call) -> Optional[str]:
        """"model" or "layer" when ``call`` constructs a Keras one (not an input or a
        preprocessing layer); None otherwise."""
        resolved = self.ctx.names.resolve(call.func)
        if resolved & MODEL_FACTORIES or any(n.startswith("keras.applications.") for n in resolved):
            return "model"
        if pretrained_model(call):
            return "model"
        if isinstance(call.func, cst.Name) and self.builds(call.func.value, classes=True):
            return "model"  # ``StyleTransferModel()`` of a class here whose ``__init__`` builds layers
        if any(n.startswith("keras.layers.") and n[13:14].isupper()
               and n[13:] not in PREPROCESSING and not n[13:].startswith("Random")
               for n in resolved) and not resolved & INPUT_LAYERS:
            return "layer"
        return None

    def builds(self, name: str, classes: bool = False) -> bool:
        """Whether the top-level function ``name`` of this module creates layers or models;
        with ``classes``, also a top-level class whose ``__init__`` does (constructing it
        builds them, under the policy in effect then)."""
        binding = self.ctx.scopes.module_scope.lookup(name)
        if binding is None:
            return False
        if binding.kind == "def":
            return id(binding.node) in self.builders
        if not classes or binding.kind != "class" or not isinstance(binding.node, cst.ClassDef):
            return False
        return any(isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__" and id(stmt) in self.builders
                   for stmt in binding.node.body.body)


def imported_builder(ctx: Context, func: cst.BaseExpression) -> Optional[str]:
    """``module.function`` when ``func`` names a function of another project module
    that creates Keras layers or models (judged there by :class:`ModelBuilders`)."""
    found = imported_definition(ctx, func)
    if found is None:
        return None
    other = analysed(found[0], ModelBuilders)
    if not isinstance(other, ModelBuilders) or not other.builds(found[1], classes=True):
        return None
    return found[1]
