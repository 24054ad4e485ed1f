-- Issue 31 item 1: a setting that played no part in an experiment is not named as one of its settings.
--
-- A setting that depends on another (oriole.catalog's applies_when: historyTurns only with historyMode conversation
-- or summary) is stored in a snapshot only where it plays a part; the comparisons fill a key a snapshot lacks with
-- its catalog default (varied_settings), and so named the idle default of a dependent setting as a condition (an
-- agent whose history is its actions "ran with" historyTurns 10). The condition is kept beside the key, so that the
-- comparisons fill a key only where it applies; written from the catalog on every load like the rest of the row.
ALTER TABLE config_keys ADD COLUMN applies_when jsonb;

COMMENT ON COLUMN config_keys.applies_when IS
    'where it depends on other settings: each such key with the values under which it plays a part, its own '
    'condition and the conditions of the settings it depends on (JSON object, key: array of values; NULL: whenever '
    'its provider does). A snapshot lacking the key is read as not applicable where a condition fails, its default '
    'elsewhere';
