"""Everyday occupations, for the job slot of "Bernd is a baker" (``slots.py``).

Written by us: the maintained list we checked, Faker's en_US job titles (MIT, a UK graduate
list), has no baker, butcher, plumber or waiter. A word not here leaves "X is a ..." out of
the job slot, so an unlisted job is kept beside the old one rather than closing a fact
that is no job ("Bernd is a vegetarian" must not be superseded by "Bernd is a butcher").
"""

from __future__ import annotations

OCCUPATIONS = frozenset(
    {"accountant", "actor", "actress", "administrator", "analyst", "architect", "artist",
    "assistant", "astronaut", "athlete", "attorney", "auditor", "author", "baker", "banker",
    "barber", "barista", "bartender", "beautician", "bookkeeper", "bricklayer", "broker",
    "builder", "butcher", "butler", "buyer", "caregiver", "carer", "carpenter", "cashier",
    "caterer", "ceo", "chef", "chemist", "cleaner", "clerk", "coach", "composer",
    "consultant", "cook", "councillor", "counsellor", "counselor", "courier", "curator",
    "dancer", "decorator", "dentist", "designer", "detective", "developer", "dietitian",
    "diplomat", "director", "doctor", "driver", "economist", "editor", "electrician",
    "engineer", "entrepreneur", "estimator", "farmer", "firefighter", "fisherman",
    "fishmonger", "florist", "gardener", "geologist", "glazier", "goldsmith", "grocer",
    "hairdresser", "handyman", "historian", "housekeeper", "illustrator",
    "inspector", "instructor", "interpreter", "investigator", "janitor", "jeweller",
    "jeweler", "joiner", "journalist", "judge", "labourer", "laborer", "landlord", "lawyer",
    "lecturer", "librarian", "lifeguard", "locksmith", "machinist", "manager",
    "mathematician", "mechanic", "midwife", "miner", "musician", "nanny", "nurse",
    "optician", "paediatrician", "painter", "paralegal", "paramedic", "pastor",
    "pediatrician", "pharmacist", "photographer", "physician", "physicist",
    "physiotherapist", "pianist", "pilot", "plasterer", "plumber", "poet", "policeman",
    "policewoman", "politician", "postman", "postwoman", "priest", "principal", "producer",
    "professor", "programmer", "psychiatrist", "psychologist", "publisher", "rabbi",
    "receptionist", "recruiter", "reporter", "researcher", "roofer", "sailor", "salesman",
    "saleswoman", "salesperson", "scientist", "secretary", "shopkeeper", "singer",
    "soldier", "solicitor", "statistician", "stylist", "supervisor", "surgeon", "surveyor",
    "tailor", "teacher", "technician", "therapist", "translator", "tutor", "typist", "vet",
    "veterinarian", "waiter", "waitress", "welder", "writer", "zookeeper"}
)  # fmt: skip
