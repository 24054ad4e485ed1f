-- Issue 30: efficiency that means one thing. An experiment keeps the optimum its path is measured against:
-- the fewest moves that change position from the start to its goal condition (oriole.core.maze.optimal_path_length):
-- the shortest path to the goal under goalCondition = reach, to the nearest tile from which the goal is seen (with
-- the experiment's visionRange) under sight. Dividing by the path to stand on the goal gave efficiencies above 1
-- under sight. StartExperiment stores it from now on; the rows stored before get it here: shortest_path_length
-- under reach, a breadth-first search of the maze under sight (the same rules; tests/integration/test_migrations.py
-- compares the two).

ALTER TABLE experiments ADD COLUMN optimal_path_length integer CHECK (optimal_path_length >= 0);

UPDATE experiments e
   SET optimal_path_length = m.shortest_path_length
  FROM mazes m
 WHERE m.id = e.maze_id AND coalesce(e.config ->> 'goalCondition', 'reach') = 'reach';

-- The sight optimum of each other row's maze (1 = wall; outside the grid is wall): the tiles that see the goal are
-- the goal and its four rays of visionRange open tiles, each stopped by the first wall or the edge (sight is
-- mutual); a start among them needs one move, into a wall next to it (no tile changes: 0) or else one step (1);
-- otherwise a breadth-first search from those tiles to the start.
DO $$
DECLARE
    r record;
    h int; w int; vision int;
    passable boolean[];
    dist int[];
    queue int[];
    head int; tail int;
    dx int[] := ARRAY[0, 1, 0, -1];
    dy int[] := ARRAY[-1, 0, 1, 0];
    x int; y int; nx int; ny int; i int; d int; here int; found int;
BEGIN
    FOR r IN SELECT e.id, e.config, m.grid, m.start_x AS sx, m.start_y AS sy, m.goal_x AS gx, m.goal_y AS gy
               FROM experiments e JOIN mazes m ON m.id = e.maze_id
              WHERE e.optimal_path_length IS NULL
    LOOP
        h := jsonb_array_length(r.grid);
        w := jsonb_array_length(r.grid -> 0);
        vision := coalesce((r.config ->> 'visionRange')::int, 3);
        passable := array_fill(false, ARRAY[w * h]);
        dist := array_fill(-1, ARRAY[w * h]);
        queue := array_fill(0, ARRAY[w * h]);
        FOR y IN 0 .. h - 1 LOOP
            FOR x IN 0 .. w - 1 LOOP
                passable[y * w + x + 1] := (r.grid -> y ->> x)::int <> 1;
            END LOOP;
        END LOOP;
        head := 1;
        tail := 1;
        queue[1] := r.gy * w + r.gx;
        dist[r.gy * w + r.gx + 1] := 0;
        FOR i IN 1 .. 4 LOOP
            FOR d IN 1 .. vision LOOP
                x := r.gx + dx[i] * d;
                y := r.gy + dy[i] * d;
                EXIT WHEN x < 0 OR y < 0 OR x >= w OR y >= h OR NOT passable[y * w + x + 1];
                dist[y * w + x + 1] := 0;
                tail := tail + 1;
                queue[tail] := y * w + x;
            END LOOP;
        END LOOP;
        found := NULL;
        IF dist[r.sy * w + r.sx + 1] = 0 THEN
            found := 1;
            FOR i IN 1 .. 4 LOOP
                x := r.sx + dx[i];
                y := r.sy + dy[i];
                IF x < 0 OR y < 0 OR x >= w OR y >= h OR NOT passable[y * w + x + 1] THEN
                    found := 0;
                END IF;
            END LOOP;
        END IF;
        WHILE found IS NULL AND head <= tail LOOP
            here := queue[head];
            head := head + 1;
            x := here % w;
            y := here / w;
            FOR i IN 1 .. 4 LOOP
                nx := x + dx[i];
                ny := y + dy[i];
                CONTINUE WHEN nx < 0 OR ny < 0 OR nx >= w OR ny >= h;
                CONTINUE WHEN NOT passable[ny * w + nx + 1] OR dist[ny * w + nx + 1] >= 0;
                dist[ny * w + nx + 1] := dist[here + 1] + 1;
                IF nx = r.sx AND ny = r.sy THEN
                    found := dist[ny * w + nx + 1];
                END IF;
                tail := tail + 1;
                queue[tail] := ny * w + nx;
            END LOOP;
        END LOOP;
        UPDATE experiments SET optimal_path_length = found WHERE id = r.id;
    END LOOP;
END
$$;

ALTER TABLE experiments ALTER COLUMN optimal_path_length SET NOT NULL;

COMMENT ON COLUMN experiments.optimal_path_length IS
    'the fewest moves that change position from the start to the goal condition: the shortest path to the goal '
    '(reach), or to the nearest tile from which the goal is seen with its visionRange (sight)';
