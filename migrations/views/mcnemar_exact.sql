-- The two-sided exact McNemar test for paired successes: the p-value of `only_a` and `only_b` discordant pairs (one
-- agent succeeded where the other failed) under no difference, the binomial with p = 1/2 over the discordant pairs:
-- min(1, 2 * P(X <= min(only_a, only_b))). 1 without discordant pairs. Each binomial term summed in logarithms
-- (ln C(n, i) built step by step), so thousands of pairs neither overflow nor underflow.
CREATE FUNCTION mcnemar_exact(only_a bigint, only_b bigint) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN v.n = 0 THEN 1.0 ELSE least(1.0, 2 * (
               SELECT sum(CASE WHEN t.ln_choose - v.n * ln(2.0) < -700 THEN 0
                               ELSE exp(t.ln_choose - v.n * ln(2.0)) END)
                 FROM (SELECT sum(CASE WHEN i = 0 THEN 0 ELSE ln((v.n - i + 1)::float8 / i) END)
                                  OVER (ORDER BY i) AS ln_choose
                         FROM generate_series(0, v.k) i) t)) END
      FROM (SELECT only_a + only_b AS n, least(only_a, only_b) AS k) v
$$;
