"""The semantic model of one file: canonical API names, scopes and bindings, static values, policy facts."""
