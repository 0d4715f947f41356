"""The nouns, with their gender and plural, and the adjectives, with the kinds of noun each describes (no
colour describes a person), and the places a preposition fits.

A noun is one line: English, gender, singular, plural (- : a mass noun, no plural), English plural, kinds,
and for a weak noun its other singular cases (der Junge, den Jungen):

    dog m Hund Hunde dogs A

    kinds   P a person, A an animal, T a thing a hand holds, F food, D a drink, R something to read,
            O something that opens, B something built, V somewhere to visit; a place: i (in it), o (on
            it: auf), u (under it), a (at it: an)
"""
from typing import NamedTuple

from .lexicon import FEMININE, MASCULINE

class Noun(NamedTuple):
    """A German noun's gender, singular, plural and dative plural, its English plural, and its kinds; a
    weak noun (der Junge, den Jungen) has its other singular cases in oblique."""
    gender: str           # m, f or n
    singular: str
    plural: str | None    # None: a mass noun (Wasser), never plural or counted
    dative_plural: str | None    # the plural + n, unless it already ends in n or s
    english_plural: str | None
    kinds: str = ""
    oblique: str | None = None   # a weak noun's accusative and dative singular


def noun_entry(line):
    """One line of NOUN_LINES -> (english, Noun)."""
    english, gender, singular, plural, english_plural, kinds, *oblique = line.split()
    if plural == "-":
        return english, Noun(gender, singular, None, None, None, kinds)
    dative = plural if plural[-1] in "ns" else plural + "n"
    return english, Noun(gender, singular, plural, dative, english_plural, kinds, *oblique)


NOUN_LINES = """
man m Mann Männer men P
woman f Frau Frauen women P
child n Kind Kinder children P
girl n Mädchen Mädchen girls P
boy m Junge Jungen boys P Jungen
teacher m Lehrer Lehrer teachers P
doctor m Arzt Ärzte doctors P
student m Student Studenten students P Studenten
friend m Freund Freunde friends P
mother f Mutter Mütter mothers P
father m Vater Väter fathers P
brother m Bruder Brüder brothers P
sister f Schwester Schwestern sisters P
son m Sohn Söhne sons P
daughter f Tochter Töchter daughters P
baby n Baby Babys babies P
grandmother f Großmutter Großmütter grandmothers P
grandfather m Großvater Großväter grandfathers P
uncle m Onkel Onkel uncles P
aunt f Tante Tanten aunts P
neighbour m Nachbar Nachbarn neighbours P Nachbarn
king m König Könige kings P
queen f Königin Königinnen queens P
dog m Hund Hunde dogs A
cat f Katze Katzen cats A
bird m Vogel Vögel birds A
horse n Pferd Pferde horses A
cow f Kuh Kühe cows A
mouse f Maus Mäuse mice A
rabbit n Kaninchen Kaninchen rabbits A
pig n Schwein Schweine pigs A
duck f Ente Enten ducks A
fox m Fuchs Füchse foxes A
bear m Bär Bären bears A Bären
lion m Löwe Löwen lions A Löwen
elephant m Elefant Elefanten elephants A Elefanten
monkey m Affe Affen monkeys A Affen
frog m Frosch Frösche frogs A
snake f Schlange Schlangen snakes A
goat f Ziege Ziegen goats A
ball m Ball Bälle balls T
book n Buch Bücher books TRO
car n Auto Autos cars Tiu
flower f Blume Blumen flowers T
cup f Tasse Tassen cups T
pen m Stift Stifte pens T
bag f Tasche Taschen bags TOi
box f Kiste Kisten boxes TOiou
key m Schlüssel Schlüssel keys T
phone n Telefon Telefone phones T
computer m Computer Computer computers T
hat m Hut Hüte hats T
shoe m Schuh Schuhe shoes T
coat m Mantel Mäntel coats T
dress n Kleid Kleider dresses T
letter m Brief Briefe letters TRO
newspaper f Zeitung Zeitungen newspapers TR
picture n Bild Bilder pictures T
clock f Uhr Uhren clocks T
glass n Glas Gläser glasses T
plate m Teller Teller plates T
spoon m Löffel Löffel spoons T
bottle f Flasche Flaschen bottles TO
umbrella m Regenschirm Regenschirme umbrellas TO
bike n Fahrrad Fahrräder bikes T
lamp f Lampe Lampen lamps T
guitar f Gitarre Gitarren guitars T
ring m Ring Ringe rings T
camera f Kamera Kameras cameras T
sock f Socke Socken socks T
jacket f Jacke Jacken jackets T
map f Karte Karten maps TR
photo n Foto Fotos photos T
toy n Spielzeug Spielzeuge toys T
doll f Puppe Puppen dolls T
present n Geschenk Geschenke presents TO
candle f Kerze Kerzen candles T
basket m Korb Körbe baskets Ti
notebook n Heft Hefte notebooks TR
story f Geschichte Geschichten stories R
table m Tisch Tische tables oua
chair m Stuhl Stühle chairs ou
bed n Bett Betten beds iou
mat f Matte Matten mats o
sofa n Sofa Sofas sofas ou
floor m Boden Böden floors o
door f Tür Türen doors Oa
window n Fenster Fenster windows Oa
tree m Baum Bäume trees u
house n Haus Häuser houses iBV
garden m Garten Gärten gardens iV
room n Zimmer Zimmer rooms i
kitchen f Küche Küchen kitchens iV
school f Schule Schulen schools iBV
park m Park Parks parks iV
city f Stadt Städte cities iV
street f Straße Straßen streets o
shop m Laden Läden shops iV
train m Zug Züge trains i
bus m Bus Busse buses i
forest m Wald Wälder forests iV
bridge f Brücke Brücken bridges ouB
cupboard m Schrank Schränke cupboards iO
shelf n Regal Regale shelves o
carpet m Teppich Teppiche carpets o
desk m Schreibtisch Schreibtische desks oua
church f Kirche Kirchen churches iBV
hospital n Krankenhaus Krankenhäuser hospitals iBV
office n Büro Büros offices iV
library f Bibliothek Bibliotheken libraries iBV
station m Bahnhof Bahnhöfe stations iaV
village n Dorf Dörfer villages iV
lake m See Seen lakes aV
field n Feld Felder fields o
mountain m Berg Berge mountains o
classroom n Klassenzimmer Klassenzimmer classrooms iV
apple m Apfel Äpfel apples F
banana f Banane Bananen bananas F
egg n Ei Eier eggs F
cake m Kuchen Kuchen cakes F
orange f Orange Orangen oranges F
cookie m Keks Kekse cookies F
pear f Birne Birnen pears F
potato f Kartoffel Kartoffeln potatoes F
tomato f Tomate Tomaten tomatoes F
sausage f Wurst Würste sausages F
salad m Salat Salate salads F
chocolate f Schokolade - - F
butter f Butter - - F
bread n Brot - - F
cheese m Käse - - F
soup f Suppe - - F
rice m Reis - - F
water n Wasser - - D
milk f Milch - - D
coffee m Kaffee - - D
tea m Tee - - D
juice m Saft - - D
"""
NOUNS = dict(noun_entry(line) for line in NOUN_LINES.strip().splitlines())   # english singular -> Noun


def nouns_of(kinds):
    """The English nouns of any of kinds (letters of the kinds above), in the table's order."""
    return tuple(english for english, entry in NOUNS.items() if set(entry.kinds) & set(kinds))


PEOPLE, ANIMALS = nouns_of("P"), nouns_of("A")
ANIMATE = PEOPLE + ANIMALS                        # may act: sleep, see, eat
PLACES = {"in": nouns_of("i"), "on": nouns_of("o"), "under": nouns_of("u"), "at": nouns_of("a")}
PLACES["next to"] = tuple(dict.fromkeys(PLACES["in"] + PLACES["on"] + PLACES["under"] + PLACES["at"]))
PREPOSITIONS = {"in": "in", "on": "auf", "under": "unter", "next to": "neben", "at": "an", "with": "mit"}
CONTRACTIONS = {("in", "dem"): "im", ("an", "dem"): "am"}      # in dem Haus -> im Haus, an dem Tisch -> am Tisch

# what a noun is called as what someone is (no article in German: Der Mann ist Lehrer), by sex
PROFESSIONS = {"teacher": ("Lehrer", "Lehrerin"), "doctor": ("Arzt", "Ärztin"), "student": ("Student", "Studentin")}
SEX = {"man": MASCULINE, "boy": MASCULINE, "father": MASCULINE, "brother": MASCULINE, "son": MASCULINE,
       "woman": FEMININE, "girl": FEMININE, "mother": FEMININE, "sister": FEMININE, "daughter": FEMININE,
       "he": MASCULINE, "she": FEMININE}


class Adjective(NamedTuple):
    """An adjective: its German word as a predicate (groß), its stem before an ending (teuer: teur), the kinds
    of noun it describes (no colour describes a person)."""
    german: str
    stem: str
    kinds: str


ADJECTIVE_LINES = """
old alt PATiouaR
young jung PA
small klein PATiouaF
big groß PATiouaF
little klein PAT
tall groß P
new neu TRiouaO
red rot TiouaO
black schwarz ATouO
white weiß ATiouaO
blue blau TouO
green grün TiouO
brown braun AT
yellow gelb T
good gut PATRF
nice nett P
happy glücklich PA
sad traurig PA
tired müde PA müd
hungry hungrig PA
beautiful schön PATiou
cold kalt FD
hot heiß FD
fast schnell AT
strong stark PA
funny lustig PA
friendly freundlich P
expensive teuer TR teur
cheap billig TR
clean sauber Tiou
dirty schmutzig ATiou
"""
ADJECTIVES = {}                                   # english -> Adjective
for _line in ADJECTIVE_LINES.strip().splitlines():
    _english, _german, _kinds, *_stem = _line.split()
    ADJECTIVES[_english] = Adjective(_german, _stem[0] if _stem else _german, _kinds)


def adjectives_for(noun_name):
    """The English adjectives that may describe noun_name (a noun of NOUNS), in the table's order."""
    kinds = set(NOUNS[noun_name].kinds)
    return tuple(english for english, adjective in ADJECTIVES.items() if kinds & set(adjective.kinds))


