#!/usr/bin/env bash
# After a run-one.sh run of the starter's jar (its database bench_prof still there): the messages
# whose first attempt started more than LATE_MS (50) after their business row, against the rest:
# how long after their key's previous message's answer they started, and whether that message was
# still out when they committed; then the late ones in order, so that a wave across keys shows.
# Times from the attempt log (started_at and duration_ms of attempt 1). Env: PGPORT (5432),
# LATE_MS (50), RUN_SIZE (8), LIMIT (40 rows of the list).
set -euo pipefail
late=${LATE_MS:-50}
psql -h 127.0.0.1 -p "${PGPORT:-5432}" -U postgres -d bench_prof -q <<SQL
create temp view t as
  select m.ordering_key, m.seq, b.created_at as committed, a.started_at, a.duration_ms,
         a.started_at + a.duration_ms * interval '1 millisecond' as answered
  from bench_business b
  join retry_outbox_message m on (convert_from(m.body, 'UTF8')::jsonb ->> 'id')::bigint = b.msg_id
  join retry_outbox_attempt a on a.message_id = m.id and a.attempt = 1;
create temp view k as
  select t.*, lag(answered) over w as prev_answered, row_number() over w as nth_of_key,
         extract(epoch from (started_at - committed)) * 1000 as wait_ms
  from t window w as (partition by ordering_key order by seq);
select case when wait_ms > $late then 'late' else 'on time' end as messages, count(*),
       round(avg(duration_ms)::numeric, 1) as attempt_ms,
       round(percentile_cont(0.5) within group (order by extract(epoch from (started_at - prev_answered)) * 1000)::numeric, 1)
         as p50_after_previous_answer_ms,
       round(percentile_cont(0.9) within group (order by extract(epoch from (started_at - prev_answered)) * 1000)::numeric, 1)
         as p90_after_previous_answer_ms,
       sum(case when prev_answered > committed then 1 else 0 end) as previous_out_at_commit
from k group by 1 order by 1;
-- A key's messages go in runs of run-size (8) from its first on while the key is busy: position 0 is
-- the first of a run, which waits for a round unless the key was idle.
select (nth_of_key - 1) % ${RUN_SIZE:-8} as position_in_run, count(*) filter (where wait_ms > $late) as late,
       count(*) as messages
from k group by 1 order by 1;
select round((extract(epoch from (committed - (select min(committed) from t))) * 1000)::numeric, 0) as committed_at_ms,
       ordering_key, round(wait_ms::numeric, 1) as wait_ms,
       round((extract(epoch from (committed - prev_answered)) * 1000)::numeric, 1) as committed_after_previous_answer_ms,
       nth_of_key
from k where wait_ms > $late order by committed limit ${LIMIT:-40};
SQL
