-- Family roles finer than "other" (issue 28): a grandmother, a cousin or a sister-in-law is
-- family, and "what do you know about my family?" must find them. Each role stays a
-- closed vocabulary (shared/models/memory.py PersonRole); the relation word as said
-- ("nonna", "sister-in-law") stays in the person's descriptors.
ALTER TABLE persons DROP CONSTRAINT persons_role_to_user_check;
ALTER TABLE persons ADD CONSTRAINT persons_role_to_user_check CHECK (role_to_user IN (
    'partner', 'child', 'parent', 'sibling', 'grandparent', 'grandchild', 'aunt_uncle',
    'cousin', 'niece_nephew', 'in_law', 'friend', 'colleague', 'pet', 'service_provider',
    'other'));
ALTER TABLE facts DROP CONSTRAINT facts_relation_to_user_check;
ALTER TABLE facts ADD CONSTRAINT facts_relation_to_user_check CHECK (relation_to_user IN (
    'self', 'partner', 'child', 'parent', 'sibling', 'grandparent', 'grandchild', 'aunt_uncle',
    'cousin', 'niece_nephew', 'in_law', 'friend', 'colleague', 'pet', 'service_provider',
    'other'));
