-- Issue 16: the database is the source of truth for mazes: the shipped set, seeded mazes (FAMILY-SIZE@SEED)
-- stored on first use, and imported ones. New mazes are numbered from 1000 on; the shipped ids stay.

CREATE SEQUENCE mazes_id_seq START WITH 1000 OWNED BY mazes.id;
ALTER TABLE mazes ALTER COLUMN id SET DEFAULT nextval('mazes_id_seq');

-- shipped: the fixed set; generated: a seeded name; imported: `oriole mazes import` (no generator, no seed)
ALTER TABLE mazes ADD COLUMN source text NOT NULL DEFAULT 'shipped'
    CHECK (source IN ('shipped', 'generated', 'imported'));
-- The generator's version a maze was drawn with (the same name gives the same grid while it stays the same).
ALTER TABLE mazes ADD COLUMN generator_version text;
UPDATE mazes SET generator_version = '1';
ALTER TABLE mazes ALTER COLUMN seed DROP NOT NULL;
ALTER TABLE mazes ADD CHECK ((source = 'imported') = (seed IS NULL));

-- Importing a grid twice is a no-op (found by its hash); the reports group by family and size.
CREATE INDEX mazes_content_hash_idx ON mazes (content_hash);
CREATE INDEX mazes_family_size_idx ON mazes (family, width, height);
