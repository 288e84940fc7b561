"""The router's labelled examples: a message is routed to the label of its nearest ones.

Changing this list changes the routing: run ``scripts/understanding_vectors.py`` to embed
it again (a test fails while ``route_vectors.npz`` is stale). The labelled evaluation set
(tests/data/understanding.jsonl) is written apart from these, in other words.
"""

from __future__ import annotations

from shared.understanding.result import Label

_EXAMPLES: dict[Label, tuple[str, ...]] = {
    "greeting": (
        "hi", "hello there", "hey!", "good morning", "good evening to you",
        "hiya, how's it going?", "hey, how are you doing?", "morning!", "yo", "greetings",
        "hi assistant", "hello again", "howdy", "bonjour", "hallo", "hola", "ciao",
        "good afternoon", "hey there, nice to see you", "what's up?", "guten morgen",
        "guten tag", "grüezi", "hoi zäme", "servus", "buongiorno", "buonasera", "salut",
        "bonsoir", "buenos días",
    ),
    "thanks": (
        "thanks", "thank you so much", "thx!", "cheers, that helps", "many thanks",
        "thanks a lot for your help", "great, thank you", "perfect, thanks!",
        "much appreciated", "thank you, that was useful", "ty", "danke", "merci beaucoup",
        "grazie", "gracias", "awesome, thanks a bunch", "that's great, thank you",
    ),
    "feedback": (
        "your last answer was wrong", "that reply was not helpful at all",
        "you keep forgetting what I tell you", "I love how fast you answer",
        "this assistant is really useful", "the suggestion you gave me was terrible",
        "please stop being so verbose", "your answers are too long",
        "I have a complaint about your reminders", "great job on the summary earlier",
        "you misunderstood me completely", "that was a bad recommendation",
        "I want to give some feedback about the app", "you are getting better at this",
        "the last response made no sense", "stop apologising so much",
    ),
    "person_question": (
        "where does my brother live?", "what does Sarah do for work?",
        "when is my mom's birthday?", "what do you know about Peter?",
        "who is Laura?", "is Ben allergic to anything?", "what does my wife like?",
        "where does Carla work?", "how old is my nephew?", "what's my boss's name?",
        "do you remember where Max lives?", "tell me what you know about my sister",
        "what is Julia allergic to?", "when was Tim born?", "what does my dad enjoy doing?",
        "which city does Nora live in?", "what kind of music does Leon like?",
        "what do you know about my family?", "who are my colleagues?",
        "what's Oliver's job?",
    ),
    "statement": (
        "my brother Paul lives in Hamburg", "Sarah works at Siemens",
        "my daughter loves horses", "I'm allergic to shellfish", "Tom's birthday is June 2",
        "my wife Clara is a teacher", "I live in Geneva", "our cat Luna hates the vacuum",
        "Peter moved to Vienna last year", "my mom enjoys gardening",
        "Laura is my best friend", "I have two kids, Emma and Noah",
        "my boss Mark is on holiday this week", "Ben works as an electrician",
        "I don't eat meat", "my neighbour Franz has a new dog",
        "Julia just started a new job at Roche", "I work for a small startup",
        "we got a puppy called Bello", "my grandmother turned ninety today",
        # everyday life told in passing: remembered if it matters, never acted on
        "I had a long day at work", "we watched a great movie last night",
        "my neighbour prefers quiet evenings", "I've been learning to play the guitar",
        "I'm a bit stressed this week", "my son started school in September",
    ),
    "schedule": (
        "remind me to buy bread at 6pm", "set a reminder for the dentist on Tuesday",
        "add a meeting with Lisa to my calendar on Thursday at 2pm",
        "put the team lunch in my calendar for Friday", "remind me tomorrow to call the bank",
        "schedule a call with Marco next Monday at 9", "what's on my calendar tomorrow?",
        "do I have anything planned this weekend?", "move my 3pm meeting to 4pm",
        "remind me in an hour to check the oven", "book a slot for yoga on Wednesday evening",
        "cancel my reminder about the laundry", "what reminders do I have?",
        "block two hours on Friday morning for focus time", "remind me every day to stretch",
        "add the concert on May 12 to my agenda", "when is my next appointment?",
        "create an event for Anna's party on Saturday at 7pm",
    ),
    "notes": (
        "note that the wifi password is on the fridge", "make a note: buy a new kettle",
        "take a note that the car needs new tyres", "write down that Lisa prefers tea",
        "save a note with the parking spot number 42", "find my note about the garden",
        "what did I note about the plumber?", "jot down: renew the passport",
        "add to my notes that the meeting room is B12", "search my notes for recipes",
        "show me my notes from last week", "note down the gate code 4711",
        "keep a note that the package arrives Thursday", "do I have a note on the insurance?",
    ),
    "email": (
        "send an email to Paul about the invoice", "write an email to my landlord",
        "draft a mail to the team about Friday's meeting", "email Sarah the new schedule",
        "reply to Marco's email and say yes", "can you email my boss that I'm sick",
        "compose an email thanking the client", "send a message to Laura by email",
        "write to the school that Emma is ill", "forward the offer to my accountant",
        "draft an email to cancel my gym membership", "mail the report to Ben",
        "send an email to hr@example.com asking for my payslip",
        "please write an email to the plumber",
    ),
    "budget": (
        "I spent 25 on lunch", "paid 60 francs for the taxi",
        "I just paid 120 for the electricity bill",
        "set my food budget to 400 a month", "how much did I spend this month?",
        "what's my budget for groceries?", "log 15 dollars for coffee",
        "record an expense of 80 for the doctor", "am I over budget on restaurants?",
        "show my expenses for October", "I bought shoes for 90 euros",
        "how much is left in my travel budget?", "track 35 for the cinema",
        "give me a summary of my spending", "I spent 12.40 on the bus",
        "set a monthly budget of 200 for fun",
    ),
    "research": (
        "find the best hiking trails near Lucerne", "research electric cars under 40000",
        "compare the prices of flights to Lisbon", "what are good books about habits?",
        "look up the opening hours of the city library", "search the web for vegan recipes",
        "what's the population of Canada?", "explain how solar panels work",
        "find me a good Italian restaurant nearby", "which laptop should I buy for programming?",
        "what are the symptoms of the flu?", "summarise the news about the election",
        "how do I renew a Swiss passport?", "what's the weather going to be like this weekend?",
        "find information about learning Spanish quickly", "who won the world cup in 2014?",
        "recommend a podcast about history", "what's the difference between a loan and a mortgage?",
        # everyday advice, ideas and trivia: the assistant answers, nothing is done
        "how long do I cook rice?", "can you give me an idea for dinner tonight?",
        "what should I wear to a job interview?", "any tips for sleeping better?",
        "suggest something fun to do on a rainy day", "tell me a fun fact about octopuses",
        "what's a nice name for a puppy?", "how do I get a coffee stain out of a shirt?",
        "what can I make with leftover potatoes?", "what is the tallest mountain in Africa?",
    ),
}  # fmt: skip

# Requests of domains we keep no records for (travel bookings, banking, the car, the
# phone, devices, the employer's HR): near a calendar or a budget in words, never an
# agent's job here. They decide nothing; an action route must be nearer than they are
# (tier.py). Written for the router; the domains are CLINC150's (testkit/clinc150.py).
ELSEWHERE: tuple[str, ...] = (
    "book me a flight to Madrid for next Friday", "get me a plane ticket to Boston",
    "reserve a hotel room in Rome for two nights", "find me a hotel near the station",
    "rent a car for the weekend in Denver", "order me a taxi to the airport",
    "call an uber to take me downtown", "get a table for four at the Thai place at 8",
    "is my flight to Paris on time?", "what gate does my plane leave from?",
    "my suitcase never arrived at the airport", "do I need a visa to travel to India?",
    "let my bank know I'm travelling to Mexico", "what's the balance of my savings account?",
    "how much money is in my checking account", "move 300 from checking into savings",
    "send 50 dollars to my brother's account", "what's my credit score right now?",
    "what's the interest rate on my car loan", "how do I raise my credit card limit?",
    "when is my credit card payment due?", "pay the water bill from my account",
    "my debit card got declined at the store", "freeze my bank card, I lost it",
    "what's the exchange rate from euros to yen?", "when do I get my next paycheck?",
    "what is my annual salary", "how many vacation days do I have left?",
    "request two days off work next month", "where can I find my w-2 form",
    "how much tax will I owe this year?", "my car needs an oil change, when should I do it",
    "book my car in for a service", "what's the tire pressure supposed to be",
    "how many miles per gallon does my car get?", "set an alarm for 6 in the morning",
    "start a timer for 15 minutes", "what time is it in Tokyo right now?",
    "what's today's date?", "turn off the lights in the kitchen", "play some jazz music",
    "add this song to my workout playlist", "call my mom on her cell",
    "where did I leave my phone?", "share my location with Dana",
    "track my online order", "order more paper towels from the store",
    "what's the weather like tomorrow", "how bad is the traffic on the way to work?",
    "change your voice to a british accent", "speak a bit slower please",
    "what is your name?", "are you a robot?", "who built you?", "tell me a joke",
    "roll a die for me", "flip a coin", "what's 15 percent of 80?",
    "how do you say goodbye in Japanese?", "how many ounces are in a pound?",
    "when is the next public holiday?", "what are my rewards points worth?",
    "what's the most I can charge on my mastercard", "raise the spending cap on my credit card",
    "what do my phone and internet bills add up to", "get my car an appointment at the garage",
    "please post me a new chequebook", "how much paid leave have I built up",
    "find me a train to Zurich for less than 50 francs", "what did my last card payment cost",
)  # fmt: skip

EXAMPLES: tuple[tuple[Label, str], ...] = tuple(
    (label, text) for label, texts in _EXAMPLES.items() for text in texts
)
