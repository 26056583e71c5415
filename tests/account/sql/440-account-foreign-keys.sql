/*
 * Foreign keys never block an account's deletion: every key that references app.users, and every
 * key that references a table whose rows go with a user (through a cascade), says `on delete
 * cascade` or `on delete set null`, and a `set null` column accepts null. Read from the catalog,
 * so a future domain's table that forgets fails here, by name.
 */
begin;
select plan(4);

create temporary view user_reach as
with recursive reach (rel) as (
  select 'app.users'::regclass
  union
  select c.conrelid::regclass
  from pg_constraint c join reach r on c.confrelid = r.rel
  where c.contype = 'f' and c.confdeltype = 'c'
)
select rel from reach;

select is_empty(
  $$ select format('%s -> %s: on delete %s', c.conrelid::regclass, c.confrelid::regclass,
                   case c.confdeltype when 'a' then 'no action' when 'r' then 'restrict'
                                      when 'd' then 'set default' end)
     from pg_constraint c
     where c.contype = 'f' and c.confrelid = 'app.users'::regclass and c.confdeltype not in ('c', 'n') $$,
  'Every foreign key referencing app.users says on delete cascade or on delete set null.'
);

select is_empty(
  $$ select format('%s -> %s (%s): on delete %s', c.conrelid::regclass, c.confrelid::regclass, c.conname,
                   case c.confdeltype when 'a' then 'no action' when 'r' then 'restrict'
                                      when 'd' then 'set default' end)
     from pg_constraint c
     where c.contype = 'f' and c.confrelid in (select rel from user_reach)
       and c.confdeltype not in ('c', 'n') $$,
  'Every foreign key referencing a table whose rows go with a user (cascade) cascades or sets null too.'
);

select is_empty(
  $$ select format('%s.%s', c.conrelid::regclass, a.attname)
     from pg_constraint c
     join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any (c.conkey)
     where c.contype = 'f' and c.confrelid in (select rel from user_reach)
       and c.confdeltype = 'n' and a.attnotnull $$,
  'Every set-null foreign key column accepts null.'
);

select isnt_empty(
  $$ select 1 from pg_constraint c
     where c.contype = 'f' and c.confrelid = 'app.users'::regclass and c.confdeltype = 'c' $$,
  'The catalog query really sees the keys (some cascade).'
);

select * from finish();
rollback;
