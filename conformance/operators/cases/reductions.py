"""(to be filled)"""
OPERATORS = ()
