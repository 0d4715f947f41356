"""translate tried as a German teacher would: 50 sentences of a first-year course book's chapters 1-8 (family,
school, home, food, time, hobbies), written without looking at the training data, each with the German a
teacher accepts. Counts, greedy and with a beam of 4: translated (no word outside the vocabulary), right,
and the wrong ones with a warning beside them and without, both as `translate` prints them (the grammar's
German where the two differ, a warning where the grammar cannot say the sentence) and with `--no-check`
(only the warning).
Prints the counts and writes benchmarks/results/teacher_trial.json.

    python -m tinytransformer train --task translate --save translate0.npz      # the default model, seed 0
    python benchmarks/teacher_trial.py --load translate0.npz
"""
import argparse
import datetime
import os
import pathlib
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_average, write_record  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "teacher_trial.json"
# the English, then the German a teacher accepts (any of them, split by " | ")
SENTENCES = """
My name is Anna. = Ich heiße Anna. | Mein Name ist Anna.
I have a brother and a sister. = Ich habe einen Bruder und eine Schwester.
My mother is a teacher. = Meine Mutter ist Lehrerin.
My father works in an office. = Mein Vater arbeitet in einem Büro.
My sister is ten years old. = Meine Schwester ist zehn Jahre alt.
We live in a small house. = Wir wohnen in einem kleinen Haus. | Wir leben in einem kleinen Haus.
Our house has a big garden. = Unser Haus hat einen großen Garten.
My grandmother lives in a village. = Meine Großmutter wohnt in einem Dorf. | Meine Großmutter lebt in einem Dorf.
I have two brothers. = Ich habe zwei Brüder.
Our dog is black. = Unser Hund ist schwarz.
The cat sleeps on the sofa. = Die Katze schläft auf dem Sofa.
The children play in the garden. = Die Kinder spielen im Garten.
I go to school. = Ich gehe zur Schule. | Ich gehe in die Schule.
The teacher is friendly. = Der Lehrer ist freundlich. | Die Lehrerin ist freundlich.
The students read a book. = Die Studenten lesen ein Buch. | Die Schüler lesen ein Buch.
The school is big. = Die Schule ist groß.
My friend is funny. = Mein Freund ist lustig. | Meine Freundin ist lustig.
The teacher writes a letter. = Der Lehrer schreibt einen Brief. | Die Lehrerin schreibt einen Brief.
We learn German. = Wir lernen Deutsch.
The classroom is clean. = Das Klassenzimmer ist sauber.
The book is on the table. = Das Buch ist auf dem Tisch. | Das Buch liegt auf dem Tisch.
The lamp is next to the bed. = Die Lampe ist neben dem Bett. | Die Lampe steht neben dem Bett.
My room is small. = Mein Zimmer ist klein.
The keys are in the bag. = Die Schlüssel sind in der Tasche.
I eat an apple. = Ich esse einen Apfel.
We drink milk. = Wir trinken Milch.
The soup is hot. = Die Suppe ist heiß.
My father cooks soup. = Mein Vater kocht Suppe.
I like chocolate. = Ich mag Schokolade.
Do you like cheese? = Magst du Käse?
My mother buys bread. = Meine Mutter kauft Brot.
The coffee is cold. = Der Kaffee ist kalt.
Today I am tired. = Heute bin ich müde.
Yesterday we visited my grandmother. = Gestern haben wir meine Großmutter besucht.
The boy is sleeping now. = Der Junge schläft jetzt. | Jetzt schläft der Junge.
I play the guitar. = Ich spiele Gitarre. | Ich spiele die Gitarre.
My brother often reads. = Mein Bruder liest oft.
She swims in the lake. = Sie schwimmt im See.
We dance in the kitchen. = Wir tanzen in der Küche.
Do you play with the dog? = Spielst du mit dem Hund?
He paints a picture. = Er malt ein Bild.
Where is my phone? = Wo ist mein Telefon? | Wo ist mein Handy?
The baby is crying. = Das Baby weint.
My uncle has a red car. = Mein Onkel hat ein rotes Auto.
The girl is my friend. = Das Mädchen ist meine Freundin.
I am hungry. = Ich bin hungrig. | Ich habe Hunger.
The man is a doctor. = Der Mann ist Arzt.
My brothers are students. = Meine Brüder sind Studenten.
We visit the city. = Wir besuchen die Stadt.
The children are happy because it is warm. = Die Kinder sind glücklich, weil es warm ist. | Die Kinder sind froh, weil es warm ist.
"""


def trial(model, beam):
    """{counts, sentences}: each sentence's German and verdict, as translate prints it (and translate --no-check:
    counted too)."""
    from tinytransformer.cli.translate import model_words
    from tinytransformer.tasks.translation import translate_checked

    pairs = [line.split(" = ") for line in SENTENCES.strip().splitlines()]
    readable = [model_words(english, model.config.max_len)[0] for english, _ in pairs]
    checked = iter(translate_checked(model, [words for words in readable if words], beam))
    counts = dict.fromkeys(["sentences", "translated", "right", "wrong", "right_but_warned", "wrong_warned",
                            "wrong_unwarned", "wrong_warned_no_check", "wrong_unwarned_no_check"], 0)
    rows = []
    for (english, accepted), words in zip(pairs, readable):
        counts["sentences"] += 1
        if words is None:
            rows.append({"english": english, "german": None})
            continue
        answer = next(checked)
        right = answer.german in accepted.split(" | ")
        warned, warned_no_check = answer.line() != answer.german, answer.line(compare=False) != answer.german
        counts["translated"] += 1
        counts["right" if right else "wrong"] += 1
        counts["right_but_warned"] += right and warned
        if not right:
            counts["wrong_warned" if warned else "wrong_unwarned"] += 1
            counts["wrong_warned_no_check" if warned_no_check else "wrong_unwarned_no_check"] += 1
        rows.append({"english": english, "german": answer.line(), "right": right})
    return {"counts": counts, "sentences": rows}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load", required=True, metavar="MODEL.npz",
                        help="a checkpoint of train --task translate --save (the default model, seed 0)")
    args = parser.parse_args()
    from tinytransformer.checkpoint import checkpoint_step, load_checkpoint

    model = load_checkpoint(args.load)
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "checkpoint_step": checkpoint_step(args.load), "load_average_before": load_average()}
    for name, beam in (("greedy", None), ("beam 4", 4)):
        record[name] = trial(model, beam)
        print(name, record[name]["counts"])
    record["load_average_after"] = load_average()
    write_record(OUT, record)


if __name__ == "__main__":
    main()
