"""The few sentences the graph writes without a model, in the chat's language."""

from __future__ import annotations

_PHRASES: dict[str, dict[str, str]] = {
    "fallback": {
        "en": "Sorry, something went wrong on my side. Please try again in a moment.",
        "de": "Entschuldigung, bei mir ist etwas schiefgelaufen. Bitte versuch es gleich nochmal.",
        "fr": "Désolé, un problème est survenu de mon côté. Réessayez dans un instant.",
        "it": "Scusa, qualcosa è andato storto. Riprova tra un momento.",
        "es": "Lo siento, algo ha fallado. Inténtalo de nuevo en un momento.",
    },
    # The model would not answer (a blocked prompt, a SAFETY or RECITATION stop).
    "declined": {
        "en": "I can't help with that one. Could you put it another way?",
        "de": "Dabei kann ich leider nicht helfen. Kannst du es anders formulieren?",
        "fr": "Je ne peux pas vous aider sur ce point. Pouvez-vous le formuler autrement ?",
        "it": "Su questo non posso aiutarti. Puoi dirlo in un altro modo?",
        "es": "Con eso no puedo ayudarte. ¿Puedes decirlo de otra manera?",
    },
    "memory_unavailable": {
        "en": "(I can't reach my memory right now, so this may miss what you told me before.)",
        "de": "(Ich komme gerade nicht an mein Gedächtnis; mir fehlt vielleicht, was du mir "
        "früher erzählt hast.)",
        "fr": "(Je n'ai pas accès à ma mémoire pour l'instant ; il peut manquer ce que vous "
        "m'avez dit avant.)",
        "it": "(Al momento non riesco ad accedere alla mia memoria; potrebbe mancare ciò che "
        "mi hai detto prima.)",
        "es": "(Ahora no puedo acceder a mi memoria; puede faltar lo que me contaste antes.)",
    },
    "which": {
        "en": "Which {name} do you mean?",
        "de": "Welche(n) {name} meinst du?",
        "fr": "De quel {name} parlez-vous ?",
        "it": "Quale {name} intendi?",
        "es": "¿A qué {name} te refieres?",
    },
    "by_the_way": {
        "en": "By the way, which {name} did you mean: {options}?",
        "de": "Übrigens, welche(n) {name} meintest du: {options}?",
        "fr": "Au fait, de quel {name} parliez-vous : {options} ?",
        "it": "A proposito, quale {name} intendevi: {options}?",
        "es": "Por cierto, ¿a qué {name} te referías: {options}?",
    },
    "someone_else": {
        "en": "Someone else",
        "de": "Jemand anderes",
        "fr": "Quelqu'un d'autre",
        "it": "Qualcun altro",
        "es": "Otra persona",
    },
    "noted": {
        "en": "Thanks, noted: you meant {name}.",
        "de": "Danke, notiert: du meintest {name}.",
        "fr": "Merci, c'est noté : vous parliez de {name}.",
        "it": "Grazie, annotato: intendevi {name}.",
        "es": "Gracias, anotado: te referías a {name}.",
    },
    "noted_new": {
        "en": "Thanks, noted: someone new called {name}.",
        "de": "Danke, notiert: jemand Neues namens {name}.",
        "fr": "Merci, c'est noté : une nouvelle personne, {name}.",
        "it": "Grazie, annotato: una persona nuova di nome {name}.",
        "es": "Gracias, anotado: una persona nueva llamada {name}.",
    },
    "approve": {
        "en": "Shall I go ahead with this? {goal}",
        "de": "Soll ich das erledigen? {goal}",
        "fr": "Dois-je m'en occuper ? {goal}",
        "it": "Procedo? {goal}",
        "es": "¿Lo hago? {goal}",
    },
    "approve_currency": {
        "en": "Shall I do this? {goal}. In which currency? (I'll keep it as your currency.)",
        "de": "Soll ich das erledigen? {goal}. In welcher Währung? (Ich merke sie mir.)",
        "fr": "Je m'en occupe ? {goal}. Dans quelle devise ? (Je la retiendrai.)",
        "it": "Procedo? {goal}. In quale valuta? (La terrò come tua valuta.)",
        "es": "¿Lo hago? {goal}. ¿En qué moneda? (La guardaré como tu moneda.)",
    },
    "approve_due_at": {
        "en": "Shall I do this? {goal}. At what time?",
        "de": "Soll ich das erledigen? {goal}. Um welche Uhrzeit?",
        "fr": "Je m'en occupe ? {goal}. À quelle heure ?",
        "it": "Procedo? {goal}. A che ora?",
        "es": "¿Lo hago? {goal}. ¿A qué hora?",
    },
    "yes": {"en": "Yes, go ahead", "de": "Ja, los", "fr": "Oui", "it": "Sì", "es": "Sí"},
    "no": {"en": "No", "de": "Nein", "fr": "Non", "it": "No", "es": "No"},
    "edit": {
        "en": "Change it (say how)",
        "de": "Ändern (sag wie)",
        "fr": "Modifier (dis comment)",
        "it": "Modifica (dimmi come)",
        "es": "Cambiarlo (di cómo)",
    },
    "started": {
        "en": "I've started on it ({what}) and will post the result here when it's ready.",
        "de": "Ich habe damit begonnen ({what}) und melde mich hier mit dem Ergebnis.",
        "fr": "C'est lancé ({what}) ; je posterai le résultat ici.",
        "it": "Ho iniziato ({what}) e pubblicherò qui il risultato.",
        "es": "Ya he empezado ({what}) y publicaré aquí el resultado.",
    },
    "refused": {
        "en": "As you asked, I left this undone: {what}.",
        "de": "Wie gewünscht habe ich das nicht erledigt: {what}.",
        "fr": "Comme demandé, je ne l'ai pas fait : {what}.",
        "it": "Come richiesto, non l'ho fatto: {what}.",
        "es": "Como pediste, no lo he hecho: {what}.",
    },
    "conflict": {
        "en": 'You told me before: "{old}". Now: "{new}". Which is right?',
        "de": 'Vorher hast du gesagt: "{old}". Jetzt: "{new}". Was stimmt?',
        "fr": 'Tu m\'as dit : "{old}". Maintenant : "{new}". Qu\'est-ce qui est juste ?',
        "it": 'Prima mi hai detto: "{old}". Ora: "{new}". Cosa è giusto?',
        "es": 'Antes me dijiste: "{old}". Ahora: "{new}". ¿Qué es correcto?',
    },
    "keep_old": {
        "en": "The earlier one",
        "de": "Das Frühere",
        "fr": "L'ancien",
        "it": "Il precedente",
        "es": "Lo anterior",
    },
    "take_new": {
        "en": "The new one",
        "de": "Das Neue",
        "fr": "Le nouveau",
        "it": "Il nuovo",
        "es": "Lo nuevo",
    },
    "keep_both": {"en": "Both", "de": "Beides", "fr": "Les deux", "it": "Entrambi", "es": "Ambos"},
    "settled": {
        "en": "Thanks, noted.",
        "de": "Danke, notiert.",
        "fr": "Merci, c'est noté.",
        "it": "Grazie, annotato.",
        "es": "Gracias, anotado.",
    },
    "settled_before": {
        "en": "That was settled already.",
        "de": "Das war schon geklärt.",
        "fr": "C'était déjà réglé.",
        "it": "Era già stato risolto.",
        "es": "Eso ya estaba resuelto.",
    },
    "job_continues": {
        "en": "Thanks, I'll carry on with that.",
        "de": "Danke, ich mache damit weiter.",
        "fr": "Merci, je continue.",
        "it": "Grazie, continuo.",
        "es": "Gracias, sigo con ello.",
    },
    "timed_out": {
        "en": "I did not hear back in time, so I left this undone: {what}.",
        "de": "Ich habe rechtzeitig keine Antwort bekommen und darum nicht erledigt: {what}.",
        "fr": "Sans réponse à temps, je ne l'ai pas fait : {what}.",
        "it": "Non ho avuto risposta in tempo, quindi non l'ho fatto: {what}.",
        "es": "No recibí respuesta a tiempo, así que no lo he hecho: {what}.",
    },
}


def phrase(key: str, language: str, **values: str) -> str:
    table = _PHRASES[key]
    return table.get(language, table["en"]).format(**values)
