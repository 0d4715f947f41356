"""The verbs, with their forms in both languages and the auxiliary of their perfect, and who may do what to
what (people buy things; things do not act).

A verb is one line: English base, he form, past, -ing; German ich, du, er, wir/sie forms, participle, h or
s (the perfect with haben or sein):

    see sees saw seeing  sehe siehst sieht sehen gesehen h
"""
from typing import NamedTuple

from .nouns import PREPOSITIONS

class Verb(NamedTuple):
    """A verb's forms: English (base, he, past, -ing) and German (ich, du, er, wir/sie, participle), and
    the auxiliary of its perfect (haben or sein)."""
    english: tuple
    german: tuple
    auxiliary: str


def verb_entry(line):
    """One line of a verb table -> (english base, Verb)."""
    *english, ich, du, er, wir, participle, auxiliary = line.split()
    return english[0], Verb(tuple(english), (ich, du, er, wir, participle), {"h": "haben", "s": "sein"}[auxiliary])


def verb_table(lines):
    """Lines of verbs -> {english base: Verb}."""
    return dict(verb_entry(line) for line in lines.strip().splitlines())


# by what follows the verb: nothing (a place may), an object (accusative; a place may follow), a receiver
# (dative) and an object, "with" and a dative, a dative object (helfen), or "that" and a clause
INTRANSITIVE = verb_table("""
sleep sleeps slept sleeping schlafe schläfst schläft schlafen geschlafen h
run runs ran running laufe läufst läuft laufen gelaufen s
sing sings sang singing singe singst singt singen gesungen h
wait waits waited waiting warte wartest wartet warten gewartet h
sit sits sat sitting sitze sitzt sitzt sitzen gesessen h
stand stands stood standing stehe stehst steht stehen gestanden h
work works worked working arbeite arbeitest arbeitet arbeiten gearbeitet h
live lives lived living wohne wohnst wohnt wohnen gewohnt h
dance dances danced dancing tanze tanzt tanzt tanzen getanzt h
laugh laughs laughed laughing lache lachst lacht lachen gelacht h
cry cries cried crying weine weinst weint weinen geweint h
go goes went going gehe gehst geht gehen gegangen s
come comes came coming komme kommst kommt kommen gekommen s
swim swims swam swimming schwimme schwimmst schwimmt schwimmen geschwommen s
drive drives drove driving fahre fährst fährt fahren gefahren s
jump jumps jumped jumping springe springst springt springen gesprungen s
fall falls fell falling falle fällst fällt fallen gefallen s
smile smiles smiled smiling lächle lächelst lächelt lächeln gelächelt h
""")
TRANSITIVE = verb_table("""
see sees saw seeing sehe siehst sieht sehen gesehen h
find finds found finding finde findest findet finden gefunden h
have has had having habe hast hat haben gehabt h
buy buys bought buying kaufe kaufst kauft kaufen gekauft h
like likes liked liking mag magst mag mögen gemocht h
love loves loved loving liebe liebst liebt lieben geliebt h
eat eats ate eating esse isst isst essen gegessen h
drink drinks drank drinking trinke trinkst trinkt trinken getrunken h
read reads read reading lese liest liest lesen gelesen h
write writes wrote writing schreibe schreibst schreibt schreiben geschrieben h
need needs needed needing brauche brauchst braucht brauchen gebraucht h
open opens opened opening öffne öffnest öffnet öffnen geöffnet h
close closes closed closing schließe schließt schließt schließen geschlossen h
hear hears heard hearing höre hörst hört hören gehört h
carry carries carried carrying trage trägst trägt tragen getragen h
wash washes washed washing wasche wäschst wäscht waschen gewaschen h
cook cooks cooked cooking koche kochst kocht kochen gekocht h
visit visits visited visiting besuche besuchst besucht besuchen besucht h
ask asks asked asking frage fragst fragt fragen gefragt h
paint paints painted painting male malst malt malen gemalt h
catch catches caught catching fange fängst fängt fangen gefangen h
throw throws threw throwing werfe wirfst wirft werfen geworfen h
take takes took taking nehme nimmst nimmt nehmen genommen h
learn learns learned learning lerne lernst lernt lernen gelernt h
sell sells sold selling verkaufe verkaufst verkauft verkaufen verkauft h
lose loses lost losing verliere verlierst verliert verlieren verloren h
forget forgets forgot forgetting vergesse vergisst vergisst vergessen vergessen h
build builds built building baue baust baut bauen gebaut h
kiss kisses kissed kissing küsse küsst küsst küssen geküsst h
meet meets met meeting treffe triffst trifft treffen getroffen h
count counts counted counting zähle zählst zählt zählen gezählt h
""")
DITRANSITIVE = verb_table("""
give gives gave giving gebe gibst gibt geben gegeben h
show shows showed showing zeige zeigst zeigt zeigen gezeigt h
bring brings brought bringing bringe bringst bringt bringen gebracht h
send sends sent sending schicke schickst schickt schicken geschickt h
""")
WITH = verb_table("""
play plays played playing spiele spielst spielt spielen gespielt h
talk talks talked talking spreche sprichst spricht sprechen gesprochen h
""")
DATIVE_OBJECT = verb_table("""
help helps helped helping helfe hilfst hilft helfen geholfen h
answer answers answered answering antworte antwortest antwortet antworten geantwortet h
thank thanks thanked thanking danke dankst dankt danken gedankt h
""")
SAYING = verb_table("""
say says said saying sage sagst sagt sagen gesagt h
know knows knew knowing weiß weißt weiß wissen gewusst h
believe believes believed believing glaube glaubst glaubt glauben geglaubt h
think thinks thought thinking denke denkst denkt denken gedacht h
hope hopes hoped hoping hoffe hoffst hofft hoffen gehofft h
""")
BE = Verb(("be", "is", "was", "being"), ("bin", "bist", "ist", "sind", "gewesen"), "sein")
VERB_TABLES = {"intransitive": INTRANSITIVE, "transitive": TRANSITIVE, "ditransitive": DITRANSITIVE,
               "with": WITH, "dative": DATIVE_OBJECT, "say": SAYING}
# the simple past German says for the English past of sein and haben (war, hatte: the perfect is rare for them)
PRETERITE = {"be": ("war", "warst", "war", "waren"), "have": ("hatte", "hattest", "hatte", "hatten")}

# who may do what: the kinds of subject, and of object, each verb takes (the default: ANIMATE subjects, any object)
SUBJECTS = {**dict.fromkeys(("sing", "wait", "work", "live", "dance", "laugh", "cry", "go", "drive", "buy", "love",
                             "read", "write", "open", "close", "wash", "cook", "visit", "ask", "paint", "throw",
                             "take", "give", "show", "bring", "send", "talk", "help", "say", "know", "believe",
                             "think", "hope", "learn", "sell", "lose", "forget", "build", "kiss", "meet", "count",
                             "smile", "answer", "thank"), "P"), "fall": "PAT"}
OBJECTS = {"see": "PATiouaFDR", "find": "PATRF", "have": "ATRF", "buy": "TRFD", "like": "PATFDR", "love": "PA",
           "eat": "F", "drink": "D", "read": "R", "write": "R", "need": "TRFD", "open": "O", "close": "O",
           "hear": "PA", "carry": "TF", "wash": "TA", "cook": "F", "visit": "PV", "ask": "P", "paint": "PATiou",
           "catch": "T", "throw": "T", "take": "TRFD", "give": "TRF", "show": "TR", "bring": "TRFD", "send": "R",
           "play": "PA", "talk": "P", "help": "P", "learn": "R", "sell": "TRFD", "lose": "T", "forget": "TR",
           "build": "B", "kiss": "PA", "meet": "P", "count": "ATF", "answer": "P", "thank": "P"}
EVERYWHERE = tuple(PREPOSITIONS)[:5]         # in, on, under, next to, at
# the verbs that may say where (sleeps in the bed), and with which prepositions
PLACED = {**dict.fromkeys(("sleep", "sit", "stand", "wait", "play", "eat", "read"), EVERYWHERE),
          **dict.fromkeys(("work", "live", "dance", "sing", "run", "drink", "write", "cook"), ("in",))}
STATIVE = ("have", "like", "love", "need", "see", "hear", "know", "believe", "think", "hope", "be")   # no -ing form

