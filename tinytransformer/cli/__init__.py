"""The command line, one module per command; __main__.py only dispatches.

    train.py        python -m tinytransformer train --task reverse ...
    gradcheck.py    python -m tinytransformer gradcheck [--ops NAME[,NAME]]
    assignment.py   python -m tinytransformer assignment DIR
    common.py       what every command shares: BadInput, the one-line Parser
"""
