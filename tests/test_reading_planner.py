"""The offline planner reads the request: each pattern a newcomer's requests went wrong on
before it did, in five languages, with the real bank and the bundled MiniLM."""

from __future__ import annotations

import pytest

from hugginggpt.nodes.planning.bank import load_bank
from hugginggpt.nodes.planning.offline import offline_plan
from hugginggpt.nodes.planning.reading import mask, split_clauses, target_languages


def plan(request: str, files: list[str] | None = None) -> list[tuple[str, list[int], dict]]:
    found = offline_plan(request, files or [], load_bank(), max_subtasks=10)
    return [(s["task"], s["dep"], s["args"]) for s in found.items]


def tasks(request: str, files: list[str] | None = None) -> list[str]:
    return [task for task, _, _ in plan(request, files)]


def test_the_source_language_is_the_texts_own_never_the_examples():
    [(task, _, args)] = plan('Translate "Je voudrais réserver une table pour deux ce soir" '
                             "into English")
    assert task == "translation" and args["src_lang"] == "fr" and args["tgt_lang"] == "en"
    [(_, _, dutch)] = plan('Can you put "Ik heb gisteren een nieuwe fiets gekocht" in English?')
    assert dutch["src_lang"] == "nl" and dutch["tgt_lang"] == "en"
    [(_, _, named)] = plan("Translate the Spanish sentence 'Hola amigo' to German")
    assert named["tgt_lang"] == "de"  # "the Spanish sentence" is no target
    caption, translation = plan("Caption photo.jpg in French")
    assert translation == ("translation", [0], {"text": "<GENERATED>-0", "tgt_lang": "fr"})


def test_every_file_is_bound_and_two_texts_feed_a_similarity():
    steps = plan("extract the text from a.png and b.png and tell me how similar they are")
    assert steps == [
        ("image-to-text", [], {"image": "a.png"}),
        ("image-to-text", [], {"image": "b.png"}),
        ("sentence-similarity", [0, 1], {"text": "<GENERATED>-0", "text2": "<GENERATED>-1"}),
    ]
    attached = plan("Caption both photos", ["/tmp/x/one.jpg", "/tmp/x/two.jpg"])
    assert [args["image"] for _, _, args in attached] == ["/tmp/x/one.jpg", "/tmp/x/two.jpg"]


def test_a_question_and_its_context_keep_their_roles():
    [(task, _, args)] = plan('Answer "when did the museum open?" from this text: "The city '
                             'museum opened in 1998 after ten years of building."')
    assert task == "question-answering"
    assert args == {"question": "when did the museum open?",
                    "text": "The city museum opened in 1998 after ten years of building."}
    [(_, _, pasted)] = plan("According to this, who founded the company? The company was "
                            "founded by two brothers in a garage in Ohio in 1952, and it "
                            "moved to Chicago ten years later.")
    assert pasted["question"].endswith("who founded the company?")
    assert "garage in Ohio" in pasted["text"] and "founded the company?" not in pasted["text"]


def test_a_label_never_feeds_a_text_step():
    steps = plan("Tell me if this review is positive and sort it into food, service or price: "
                 "the pasta was cold and the waiter forgot our drinks twice.")
    assert [t for t, _, _ in steps] == ["text-classification", "zero-shot-classification"]
    assert all("<GENERATED>" not in v for _, _, args in steps for v in args.values())
    assert steps[1][2]["labels"] == "food, service, price"


def test_labels_and_targets_come_from_the_request_only():
    assert plan('Classify "the striker scored twice in the final" as sports, politics or '
                'science') == [("zero-shot-classification", [], {
                    "text": "the striker scored twice in the final",
                    "labels": "sports, politics, science"})]
    french = plan("Résume ce texte : Le conseil municipal a voté mardi un plan pour doubler "
                  "le nombre de pistes cyclables d'ici 2030.")
    assert [t for t, _, _ in french] == ["summarization"]  # no languages copied in


def test_which_language_is_identification_not_translation():
    assert tasks('Which language is "Dziękuję bardzo za pomoc"?') == ["text-classification"]
    assert tasks("Quelle langue est-ce : « Dit is een mooie dag »") == ["text-classification"]


def test_no_step_is_planned_twice():
    steps = plan("Caption holiday.jpg. Then caption holiday.jpg again and read the caption "
                 "aloud")
    assert [t for t, _, _ in steps] == ["image-to-text", "text-to-speech"]


@pytest.mark.parametrize(("request_", "expected"), [
    ("Traduis « Je voudrais un café » en anglais", [("translation", "en")]),
    ("Peux-tu décrire photo.jpg puis lire la description à voix haute ?",
     [("image-to-text", None), ("text-to-speech", None)]),
    ("Transcris reunion.wav et résume-la", [("automatic-speech-recognition", None),
                                            ("summarization", None)]),
    ("Traduce esta frase al inglés: «Mañana vamos a la playa con mis primos»",
     [("translation", "en")]),
    ("¿Este comentario es positivo o negativo? «El hotel estaba sucio y el personal fue "
     "grosero»", [("text-classification", None)]),
    ("Describe la foto playa.jpg y léela en voz alta",
     [("image-to-text", None), ("text-to-speech", None)]),
    ("Übersetze bitte ins Englische: „Wir treffen uns morgen um acht Uhr am Bahnhof.“",
     [("translation", "en")]),
    ("Fasse diesen Text zusammen: Die Stadt Berlin hat beschlossen, neue Radwege zu bauen, "
     "um den Verkehr zu entlasten.", [("summarization", None)]),
    ("Transkribiere interview.mp3 und übersetze es ins Französische",
     [("automatic-speech-recognition", None), ("translation", "fr")]),
    ("把这句话翻译成英文：今天天气很好，我们去公园散步吧。", [("translation", "en")]),
    ("请总结一下这段话：人工智能正在改变我们的生活方式，从医疗到交通，各个行业都在经历深刻的变革。",
     [("summarization", None)]),
    ("描述一下 cat.jpg，然后把描述翻译成法语", [("image-to-text", None), ("translation", "fr")]),
    ("这条评论是正面还是负面的？「服务太慢了，菜也凉了」", [("text-classification", None)]),
])
def test_requests_in_french_spanish_german_and_chinese(request_, expected):
    steps = plan(request_)
    assert [(t, args.get("tgt_lang")) for t, _, args in steps] == expected
    assert all(s[1] == [] for s in steps[:1])


def test_small_talk_and_general_questions_plan_nothing():
    for request in ("Hi! How are you today?", "thanks, that's all!", "Bonjour, ça va ?",
                    "What's the tallest mountain in Africa?", "你好"):
        assert plan(request) == [], request


def test_clauses_are_split_outside_quoted_and_pasted_text():
    request = ('Summarise this, then translate it into German: Anna went home. Then she '
               'cooked dinner, and then she read "a book, then another one".')
    masked = mask(request)
    assert masked.instruction == "Summarise this, then translate it into German: ⟨0⟩"
    assert split_clauses(request)[0] == "Summarise this"
    assert [t for t, _, _ in plan(request)] == ["summarization", "translation"]
    assert plan(request)[1][1] == [0]


def test_a_long_pasted_text_is_one_text_to_work_on():
    article = " ".join(f"Sentence {i} says that the river rose again, then fell." for i in
                       range(1700))  # about 95 KB, with "then" and commas everywhere
    steps = plan(f"Please summarise this article: {article}")
    assert [t for t, _, _ in steps] == ["summarization"]
    assert steps[0][2]["text"] == article


def test_target_languages_in_five_languages():
    assert target_languages("translate into French and German") == ["fr", "de"]
    assert target_languages("I have a sentence in Spanish. Put it into English.") == ["en"]
    assert target_languages("en anglais") == ["en"]
    assert target_languages("al inglés") == ["en"]
    assert target_languages("auf Englisch") == ["en"]
    assert target_languages("翻译成英文") == ["en"]


# Requests written for development (not from either labelled set), each with its plan's
# tasks and dependencies, or its tasks alone.
USERS_WORDS = [
    ('got a voicemail (vm_77.wav), can you write it out and then tell me if the caller sounds upset',
     [['automatic-speech-recognition', []], ['text-classification', [0]]]),
    ("what's the gist of podcast_ep4.mp3? in spanish please",
     [['automatic-speech-recognition', []], ['summarization', [0]], ['translation', [1]]]),
    ('take the text off flyer.png and read it out loud for my grandpa',
     [['image-to-text', []], ['text-to-speech', [0]]]),
    ('describe sunset.jpg, then use that description to generate a new painting',
     [['image-to-text', []], ['text-to-image', [0]]]),
    ('write a short poem about rain and then make a picture to go with it',
     [['text-generation', []], ['text-to-image', [0]]]),
    ('transcribe standup.m4a, then list the people mentioned',
     [['automatic-speech-recognition', []], ['token-classification', [0]]]),
    ('scan_3.png is a page from a contract. pull the text and summarise it for me',
     [['image-to-text', []], ['summarization', [0]]]),
    ('make a drawing of a lighthouse at night, then tell me what objects are in it',
     [['text-to-image', []], ['object-detection', [0]]]),
    ("translate 'where is the train station?' into japanese and say it out loud",
     [['translation', []], ['text-to-speech', [0]]]),
    ('caption beach.jpg and tell me whether the caption sounds positive',
     [['image-to-text', []], ['text-classification', [0]]]),
    ('Écoute appel.wav, transcris-le puis traduis-le en anglais',
     [['automatic-speech-recognition', []], ['translation', [0]]]),
    ('Saca el texto de cartel.jpg y dime de qué idioma es',
     [['image-to-text', []], ['text-classification', [0]]]),
    ('Transkribiere sprachnachricht.ogg und fasse sie kurz zusammen',
     [['automatic-speech-recognition', []], ['summarization', [0]]]),
    ('把 menu.jpg 上的文字识别出来，再翻译成中文',
     [['image-to-text', []], ['translation', [0]]]),
    ("generate a picture of a snowy village and describe what's in it in french",
     [['text-to-image', []], ['image-to-text', [0]], ['translation', [1]]]),
    ('summarise this and then read the summary aloud: The library will close early on Friday because of the staff training day, and it will reopen at the usual time on Saturday morning.',
     [['summarization', []], ['text-to-speech', [0]]]),
    ('estimate the depth of room.jpg and then caption the depth map',
     [['depth-estimation', []], ['image-to-text', [0]]]),
    ("can u tell me if this tweet is angry or just sarcastic: 'oh great, another monday, exactly what i needed'",
     ['text-classification']),
    ("what mood is the writer in? 'I finally got the job!!! can't stop smiling'",
     ['text-classification']),
    ("is 'Das Wetter ist heute schön' german or dutch?",
     ['text-classification']),
    ("who is the CEO according to this: 'Acme Corp appointed Jane Doe as chief executive in 2019, replacing John Roe.'",
     ['question-answering']),
    ("here's an email from my landlord: 'The rent will rise by 5% from March. Payment is due on the 1st.' when is the payment due?",
     ['question-answering']),
    ("pull out the names of companies in 'Google and Microsoft both invested in OpenAI rivals last year'",
     ['token-classification']),
    ("is this email spam, work or personal? 'Congratulations, you won a free cruise, click here'",
     ['zero-shot-classification']),
    ("put this headline in one of these buckets: tech, sport, politics. 'Parliament passes new budget after long debate'",
     ['zero-shot-classification']),
    ("what's in street_view.png and can you read it out to me",
     ['image-to-text', 'text-to-speech']),
    ('compare a.wav and b.wav - are they saying the same thing?',
     ['automatic-speech-recognition', 'automatic-speech-recognition', 'sentence-similarity']),
    ('transcribe lecture1.mp3 and lecture2.mp3',
     ['automatic-speech-recognition', 'automatic-speech-recognition']),
    ('caption img1.jpg and img2.jpg, then translate both captions into Spanish',
     ['image-to-text', 'image-to-text', 'translation', 'translation']),
    ('make a picture of a red bicycle leaning on a wall and then describe it in german',
     ['text-to-image', 'image-to-text', 'translation']),
    ('Bonjour ! Peux-tu me dire ce que dit le message vocal message.wav ?',
     ['automatic-speech-recognition']),
    ("Traduce al francés: 'Necesito ayuda con mi pedido'",
     ['translation']),
    ('¿De qué humor está esta persona? «Estoy harto de esperar, nadie me contesta»',
     ['text-classification']),
    ('Kannst du mir sagen, wer in diesem Satz erwähnt wird: „Angela Merkel traf Emmanuel Macron in Paris.“',
     ['token-classification']),
    ('Beschreibe das Foto urlaub.jpg auf Englisch',
     ['image-to-text', 'translation']),
    ('请把 meeting.mp3 转成文字，然后总结一下',
     ['automatic-speech-recognition', 'summarization']),
    ('这段话是什么语言？「Obrigado pela ajuda」',
     ['text-classification']),
    ('帮我画一只在月球上的猫',
     ['text-to-image']),
    ('good morning!',
     []),
    ("what's 17 times 23?",
     []),
    ('Merci beaucoup, à bientôt',
     []),
    ('how similar is the caption of cat1.jpg to the caption of cat2.jpg?',
     ['image-to-text', 'image-to-text', 'sentence-similarity']),
    ('find the people in crowd.jpg and tell me how many there are',
     ['object-detection']),
    ('estimate how far things are in hallway.png',
     ['depth-estimation']),
    ('cut the dog out of park.jpg',
     ['image-segmentation']),
    ('what breed is the dog in pup.jpg?',
     ['image-classification']),
    ('does the invoice_44.png say when payment is due?',
     ['document-question-answering']),
    ('which products sold best according to sales.csv?',
     ['table-question-answering']),
    ('clean up the hiss in old_tape.wav',
     ['audio-to-audio']),
    ('what sound is in mystery.wav?',
     ['audio-classification']),
    ("turn this paragraph into a short video: 'a fox runs through a snowy forest at dawn'",
     ['text-to-video']),
    ("rewrite my message so it sounds more polite: 'send me the file now'",
     ['text2text-generation']),
    ("fill in the blank: 'The capital of France is [MASK].'",
     ['fill-mask']),
    ("give me an embedding vector for 'machine learning is fun'",
     ['feature-extraction']),
    ("Summarise this review and tell me if it's positive: I bought these headphones last month and the sound is great, but the battery dies after two hours which is really disappointing.",
     ['summarization', 'text-classification']),
    ('listen to complaint.wav and tell me how angry the caller is',
     ['automatic-speech-recognition', 'text-classification']),
]


@pytest.mark.parametrize(("request_", "expected"), USERS_WORDS)
def test_requests_in_users_own_words(request_, expected):
    steps = plan(request_)
    if expected and isinstance(expected[0], list):
        assert [[t, dep] for t, dep, _ in steps] == expected
    else:
        assert [t for t, _, _ in steps] == expected


def test_a_cue_reads_the_labels_of_its_step(monkeypatch):
    """A declaration's cue may say what a clause asks to look for: the words its
    ``labels`` group matches are the step's labels, articles left out."""
    from hugginggpt.nodes.planning import cues
    from hugginggpt.tools.experts import tasks

    spotter = tasks.TaskType(
        "spot-the-thing", "Find the things named in an image.",
        args=(tasks.IMAGE, tasks.Arg("labels", "param")),
        outputs=(tasks.Output("objects", "labels"),),
        cues=(tasks.Cue(r"\bi spy (?P<labels>[\w ]+?) in\b", needs="image", rank=1),))
    tasks.task_types()  # every declaration registered before one is added
    monkeypatch.setitem(tasks._REGISTRY, spotter.name, spotter)
    cues.cues.cache_clear()
    try:
        spied = offline_plan("I spy the teapot and a kettle in shelf.jpg", [], load_bank(),
                             max_subtasks=4)
    finally:
        monkeypatch.undo()
        cues.cues.cache_clear()
    assert spied.items == [{"id": 0, "task": "spot-the-thing", "dep": [],
                            "args": {"image": "shelf.jpg", "labels": "teapot, kettle"}}]
