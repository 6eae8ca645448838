"""How the program model's summaries (``run.summaries``) write the arguments that calls
in other modules pass, as the evaluator reads them (``ModuleFacts.project_arguments``)."""

#: an argument that is not a literal
ELSEWHERE_UNKNOWN = "?"
#: a call that spreads ``**kwargs`` (no ``*args``)
KEYWORD_SPREAD = "**"
#: where the call is written: ``folder/caller.py:42``, relative to the project root
#: (the tensor analysis judges the argument there: ``analysis.tensor_callers``); not a slot
CALLER_AT = "@"
