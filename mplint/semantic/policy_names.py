"""The dtype policy names rules care about, in a module that imports nothing, so the
project index (which must not load libcst on a cached run) and the facts share them."""

MIXED_POLICIES = frozenset({"mixed_float16", "mixed_bfloat16"})
#: a policy chosen at run time, whose value cannot be read
UNKNOWN = "?"
#: what makes policy rules apply: a mixed policy, or one that may be
MAYBE_MIXED = MIXED_POLICIES | {UNKNOWN}
