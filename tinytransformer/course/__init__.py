"""The course kit: grading a student's backward passes, and the student edition that asks for them.

    cases.py           every op's gradient-check cases: shapes and options, small and unequal
    diagnose.py        what kind of mistake a wrong gradient shows: sign, factor, transposed, missing sum, ...
    op_grading.py      one op's backward judged on trials (float64 values, float32 dtype, -inf inputs)
    tape_grading.py    Tape.backward judged on a graph of finite-difference ops
    report.py          the grader's table
    grader.py          every backward pass graded op by op against finite differences, with diagnoses
    mistakes.py        a catalogue of student mistakes in backward passes, each caught by the grader
    stubs.py           a backward pass's stub, made with ast from the library's own source
    stub_notes.py      what each stub's docstring adds: special cases, the notebook that derives it
    edition.py         the student edition: the project copied with its backward passes blank
    answers.py         what a backward pass computes, recognised under other names: a notebook line leaves the edition
    reading.py         a submission read without trusting it: its edition found, every file read with bounds
    parsing.py         its files compiled, where each function is defined, what calls for review: a process of its own
    submission.py      a class graded: only the students' backward passes taken, judged here
    isolation.py       each submission's code in a sandboxed process, with time, memory and size limits
    sandbox.py         starting a command in an OS sandbox: bubblewrap, else an unprivileged user
    child.py           that process: the student's files imported as Python does, over a package of stubs
    wire.py            arrays, tuples and numbers between the two processes, without pickle, bounded
    autograder.py      a Gradescope autograder zip: the library as a wheel, setup.sh, run_autograder
    worked_example.py  the course's 3-input self-attention example
    templates/         the student edition's README
"""
