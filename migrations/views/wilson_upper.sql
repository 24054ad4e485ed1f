-- The upper end of the 95% Wilson score interval for `successes` out of `trials` (NULL when there are no trials).
CREATE FUNCTION wilson_upper(successes bigint, trials bigint) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN trials > 0 THEN least(1.0, (p + z * z / (2 * n) + z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)))
                                            / (1 + z * z / n)) END
      FROM (SELECT successes::float8 / nullif(trials, 0) AS p, trials::float8 AS n, 1.959963984540054 AS z) v
$$;
