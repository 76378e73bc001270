"""What the models say about a stored run, stored beside it: runners.analysis.run_analysis runs
the steps in order (its docstring says what each writes); each step is a module here."""
