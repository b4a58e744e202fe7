"""Language identification on short sentences: lingua against langdetect.

The lite engines tell a text's language to choose a model that can read it, a voice, a
stemmer; the texts are often short (a quoted review, a one-line request). langdetect
(a port of Google's 2010 n-gram detector) says 1.0 even when it is wrong; lingua
(``lingua-language-detector``) ships its models in the wheel and is built for short texts.

Each engine runs in its own process (so load time and memory are its own) on the same
sentences written for this benchmark: several per language, 3 to 12 words, with the close
pairs that trip detectors (Dutch/Afrikaans, Spanish/Portuguese/Catalan,
Danish/Norwegian/Swedish, Chinese/Japanese/Korean, Indonesian/Malay, Russian/Ukrainian,
Czech/Slovak). Rows:

- ``langdetect``: its 55 profiles, seed 0 (as the project ran it before; the project no
  longer depends on it, so the row needs ``pip install langdetect``);
- ``lingua-project``: lingua restricted to the project's languages
  (:data:`hugginggpt.tools.experts.lite.languages.LINGUA_LANGUAGES`), what the project uses;
- ``lingua-low``, ``lingua-high``: lingua over the project's languages in one mode;
- ``lingua-all``: lingua with all its 75 languages (the cost of more).

Printed per row: accuracy, accuracy of the answers the engine is sure of (lingua: top
confidence >= :data:`~hugginggpt.tools.experts.lite.languages.SURE`; langdetect is always
"sure"), median and 95th-percentile latency per detection after the first, the first
detection (its load), and the process's peak memory. Then the verdict.

Run: ``python benchmarks/language_id.py`` (about a minute).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys

SENTENCES: dict[str, list[str]] = {
    "en": ["The weather is lovely today", "Could you send me the report by Friday?",
           "My brother bought a new bicycle last week", "I think the meeting went well"],
    "nl": ["Dit is een mooie dag om te fietsen", "Ik heb gisteren een boek gekocht",
           "Waar is het dichtstbijzijnde station?", "Wij gaan morgen naar de markt"],
    "af": ["Ek is baie bly om jou te sien", "Die kinders speel buite in die son",
           "Ons gaan môre see toe", "Hoeveel kos hierdie brood?"],
    "es": ["Me encanta este restaurante", "¿Dónde está la estación de tren?",
           "Mañana vamos a la playa con los niños", "El libro que compré es muy bueno"],
    "pt": ["Eu gosto muito deste lugar", "Onde fica a estação de comboios?",
           "Amanhã vamos à praia com as crianças", "O livro que comprei é muito bom"],
    "ca": ["M'agrada molt aquest restaurant", "On és l'estació de tren?",
           "Demà anirem a la platja amb els nens", "El llibre que vaig comprar és molt bo"],
    "it": ["Mi piace molto questo ristorante", "Dove si trova la stazione?",
           "Domani andiamo al mare con i bambini", "Il libro che ho comprato è bello"],
    "fr": ["J'adore ce film", "Où se trouve la gare, s'il vous plaît?",
           "Demain nous irons à la plage avec les enfants", "Le livre que j'ai acheté est bon"],
    "de": ["Ich fahre morgen mit dem Zug nach Berlin", "Das Essen war wirklich lecker",
           "Wo ist der nächste Bahnhof?", "Wir haben den ganzen Tag gearbeitet"],
    "da": ["Jeg kan godt lide at cykle", "Hvor ligger den nærmeste togstation?",
           "Vi skal på stranden i morgen", "Bogen, jeg købte, er meget god"],
    "no": ["Jeg liker å gå på tur i skogen", "Hvor ligger nærmeste togstasjon?",
           "Vi skal til stranden i morgen", "Boka jeg kjøpte er veldig bra"],
    "sv": ["Jag tycker om att cykla", "Var ligger närmaste tågstation?",
           "Vi ska åka till stranden i morgon", "Boken som jag köpte är mycket bra"],
    "zh": ["今天天气很好", "我很喜欢这部电影", "请问火车站在哪里？", "这本书非常有意思"],
    "ja": ["今日はいい天気ですね", "この映画がとても好きです", "駅はどこですか？",
           "この本はとても面白い"],
    "ko": ["오늘 날씨가 좋네요", "이 영화를 정말 좋아해요", "기차역이 어디에 있어요?",
           "이 책은 아주 재미있어요"],
    "id": ["Saya suka makan nasi goreng", "Di mana stasiun kereta terdekat?",
           "Besok kami akan pergi ke pantai", "Buku yang saya beli sangat bagus"],
    "ms": ["Saya sangat gembira hari ini", "Di manakah stesen kereta api terdekat?",
           "Esok kami akan pergi ke pantai bersama kawan-kawan",
           "Kereta itu rosak semalam"],
    "ru": ["Сегодня очень хорошая погода", "Где находится вокзал?",
           "Мы завтра поедем на море", "Эта книга очень интересная"],
    "uk": ["Сьогодні дуже гарна погода", "Де знаходиться вокзал?",
           "Ми завтра поїдемо на море", "Ця книжка дуже цікава"],
    "cs": ["Dnes je opravdu krásné počasí", "Kde je nejbližší nádraží?",
           "Zítra pojedeme k moři", "Tahle kniha je velmi zajímavá"],
    "sk": ["Dnes je naozaj pekné počasie", "Kde je najbližšia železničná stanica?",
           "Zajtra pôjdeme k moru", "Táto kniha je veľmi zaujímavá"],
    "pl": ["Dzisiaj jest bardzo ładna pogoda", "Gdzie jest najbliższy dworzec?",
           "Jutro pojedziemy nad morze", "Ta książka jest bardzo ciekawa"],
    "tr": ["Bugün hava çok güzel", "En yakın tren istasyonu nerede?",
           "Yarın çocuklarla denize gideceğiz", "Bu kitap çok ilginç"],
    "ar": ["الطقس جميل جدا اليوم", "أين محطة القطار؟", "سنذهب إلى البحر غدا",
           "هذا الكتاب ممتع جدا"],
    "hi": ["आज मौसम बहुत अच्छा है", "रेलवे स्टेशन कहाँ है?", "कल हम समुद्र तट पर जाएंगे",
           "यह किताब बहुत रोचक है"],
}
"""Short sentences by their language's ISO 639-1 code (written for this benchmark)."""

CHILD = r"""
import json, resource, statistics, sys, time
engine, sentences = sys.argv[1], json.loads(sys.stdin.read())
started = time.perf_counter()
if engine == "langdetect":
    from langdetect import DetectorFactory, detect_langs
    DetectorFactory.seed = 0
    def detect(text):
        found = detect_langs(text)[0]
        return found.lang.split("-")[0], float(found.prob)
else:
    from hugginggpt.tools.experts.lite import languages
    from lingua import LanguageDetectorBuilder
    if engine == "lingua-all":
        languages.lingua_detector = lambda: LanguageDetectorBuilder.from_all_languages().build()
    elif engine == "lingua-low":
        languages.QUICK_SURE = 0.0
    elif engine == "lingua-high":
        languages.lingua_detector = lambda: languages.builder().build()
    def detect(text):
        found = languages.confidences(text)
        return found[0] if found else (None, 0.0)
first = None
rows, times = [], []
for expected, text in sentences:
    t = time.perf_counter()
    got, p = detect(text)
    elapsed = time.perf_counter() - t
    if first is None:
        first = time.perf_counter() - started
    else:
        times.append(elapsed)
    rows.append([expected, text, got, p])
times.sort()
print(json.dumps({"rows": rows, "first_s": first,
                  "median_ms": 1000 * statistics.median(times),
                  "p95_ms": 1000 * times[int(0.95 * (len(times) - 1))],
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(engine: str) -> dict:
    """One engine's results, from a fresh process."""
    sentences = [[code, text] for code, texts in SENTENCES.items() for text in texts]
    done = subprocess.run([sys.executable, "-c", CHILD, engine], input=json.dumps(sentences),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", nargs="*",
                        default=["langdetect", "lingua-project", "lingua-low", "lingua-high",
                                 "lingua-all"])
    parser.add_argument("--wrong", action="store_true", help="list each wrong answer")
    args = parser.parse_args(argv)
    from hugginggpt.tools.experts.lite.languages import SURE

    total = sum(len(texts) for texts in SENTENCES.values())
    print(f"{total} sentences in {len(SENTENCES)} languages; 'sure' = top probability "
          f">= {SURE}")
    print(f"{'engine':15} {'right':>9} {'sure: right/sure':>17} {'median':>8} {'p95':>8} "
          f"{'first':>7} {'peak MB':>8}")
    scores: dict[str, float] = {}
    for engine in args.engines:
        if engine == "langdetect" and importlib.util.find_spec("langdetect") is None:
            print("langdetect      not installed (the project no longer depends on it): "
                  "pip install 'langdetect>=1.0.9,<2' to compare")
            continue
        found = run(engine)
        rows = found["rows"]
        right = sum(got == expected for expected, _, got, _ in rows)
        sure = [(expected, got) for expected, _, got, p in rows if p >= SURE]
        sure_right = sum(got == expected for expected, got in sure)
        scores[engine] = right / len(rows)
        print(f"{engine:15} {right:4}/{len(rows):<4} {sure_right:8}/{len(sure):<8} "
              f"{found['median_ms']:6.2f}ms {found['p95_ms']:6.2f}ms "
              f"{found['first_s']:6.2f}s {found['peak_mb']:8.0f}")
        if args.wrong:
            for expected, text, got, p in rows:
                if got != expected:
                    print(f"    {expected} -> {got} ({p:.2f}): {text}")
        else:
            confidences = [p for _, _, got, p in rows]
            print(f"    top probability: median {statistics.median(confidences):.2f}, "
                  f"lowest {min(confidences):.2f}")
    if not scores:
        return 1
    best = max(scores, key=scores.__getitem__)
    print(f"verdict: {best} is the most accurate ({scores[best]:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
