"""The command line, one module per command; __main__.py only dispatches.

    train.py        python -m tinytransformer train --task reverse ...
    translate.py    python -m tinytransformer translate --load MODEL.npz "the old dog sees the small cat"
    check.py        python -m tinytransformer check [--ops NAME[,NAME]]
    assignment.py   python -m tinytransformer assignment DIR
    grade.py        python -m tinytransformer grade SUBMISSION...
    common.py       what every command shares: BadInput, the one-line Parser
"""
