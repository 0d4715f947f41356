"""The course kit: grading a student's backward passes, and the student edition that asks for them.

    cases.py           every op's gradient-check cases: shapes and options, small and unequal
    diagnose.py        what kind of mistake a wrong gradient shows: sign, factor, transposed, missing sum, ...
    grader.py          every backward pass graded op by op against finite differences, with diagnoses
    mistakes.py        a catalogue of student mistakes in backward passes, each caught by the grader
    stubs.py           a backward pass's stub, made with ast from the library's own source
    edition.py         the student edition: the project copied with its backward passes blank
    worked_example.py  the course's 3-input self-attention example
    templates/         the student edition's README
"""
