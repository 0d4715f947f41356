"""The command line, one module per command; __main__.py only dispatches.

    train.py        python -m tinytransformer train --task reverse ...
    train_flags.py  train's options, read from where each is declared (tasks/options.py), and their help
    train_outputs.py  the files train writes (--save, --json, --plot): checked first, written atomically
    translate.py    python -m tinytransformer translate --load MODEL.npz "the old dog sees the small cat"
    check.py        python -m tinytransformer check [--ops NAME[,NAME]]
    assignment.py   python -m tinytransformer assignment DIR
    grade.py        python -m tinytransformer grade SUBMISSION...
    handin.py       python -m tinytransformer handin: the zip a student uploads
    common.py       what every command shares: BadInput, the one-line Parser
"""
