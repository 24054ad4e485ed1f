-- Issue 31: an Ollama experiment's output cap, or its absence, as a key of its snapshot with what was sent.
--
-- Ollama requests carried no options.num_predict until numPredict became a setting (issue 30 item 10): those
-- experiments ran with no cap of their own (the model's default applied), but their snapshots lack the key, and
-- the comparisons read a missing key as the catalog's default (1024), which was never sent. They now hold
-- numPredict 0, the value that means "no cap sent" (oriole.catalog), so a comparison splits them from capped runs
-- and names the key. A replay's scratch copy (llm_provider replay) of such an experiment holds its original's
-- snapshot and is given the same.

UPDATE experiments e
   SET config = e.config || '{"numPredict": 0}'::jsonb
 WHERE jsonb_typeof(e.config) = 'object'
   AND NOT e.config ? 'numPredict'
   AND (e.llm_provider = 'ollama'
        OR e.replay_of IN (SELECT o.id FROM experiments o WHERE o.llm_provider = 'ollama'));
