"""The kinds of tensor dtypes the numeric rules tell apart (see ``tensor_kinds``)."""

#: the 16-bit compute dtype of a mixed policy (float16 or bfloat16)
LOW = "low"
#: certainly float32
F32 = "f32"
