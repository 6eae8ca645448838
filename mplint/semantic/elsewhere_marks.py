"""How the program model's summaries (``run.summaries``) write the arguments that calls
in other modules pass, as the evaluator reads them (``ModuleFacts.project_arguments``)."""

#: an argument that is not a literal
ELSEWHERE_UNKNOWN = "?"
#: a call that spreads ``**kwargs`` (no ``*args``)
KEYWORD_SPREAD = "**"
