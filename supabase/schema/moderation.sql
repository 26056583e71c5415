-- Agora's schema as it is now, domain moderation: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261129190100_moderation.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- type app.moderation_action
-- created in 20261129190100_moderation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.moderation_action AS ENUM (
    'delete_message',
    'suspend_user',
    'hide_product'
);

COMMENT ON TYPE app.moderation_action IS 'What an ADMIN did when resolving a report: deleted the message, suspended the user (or the message''s sender), hid the product.';

GRANT ALL ON TYPE app.moderation_action TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.report_reason
-- created in 20261129190100_moderation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.report_reason AS ENUM (
    'spam',
    'abuse',
    'fraud',
    'other'
);

COMMENT ON TYPE app.report_reason IS 'Why the reporter reports: spam, abuse (harassment, hate, threats), fraud, or other (the note says).';

GRANT ALL ON TYPE app.report_reason TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.report_status
-- created in 20261129190100_moderation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.report_status AS ENUM (
    'open',
    'dismissed',
    'actioned'
);

COMMENT ON TYPE app.report_status IS 'open: waiting for an ADMIN; dismissed: reviewed, nothing done; actioned: reviewed and acted on.';

GRANT ALL ON TYPE app.report_status TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.report_subject_type
-- created in 20261129190100_moderation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.report_subject_type AS ENUM (
    'message',
    'user',
    'product',
    'vendor'
);

COMMENT ON TYPE app.report_subject_type IS 'What a report is about: a message, a user, a product or a vendor (subject_id is its id).';

GRANT ALL ON TYPE app.report_subject_type TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.report_snapshots
-- created in 20261129190100_moderation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.report_snapshots (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    subject_type app.report_subject_type NOT NULL,
    subject_id uuid NOT NULL,
    snapshot jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT report_snapshots_snapshot_check CHECK ((jsonb_typeof(snapshot) = 'object'::text))
);

COMMENT ON TABLE app.report_snapshots IS 'The subject of a report as it was when the first open report on it was made, so an ADMIN judges what was reported even after it was edited or deleted. Read by ADMINs only (a deleted message''s content stays here for them); written by app.create_report.';

ALTER TABLE ONLY app.report_snapshots
    ADD CONSTRAINT report_snapshots_pkey PRIMARY KEY (id);

ALTER TABLE app.report_snapshots ENABLE ROW LEVEL SECURITY;

CREATE POLICY report_snapshots_select_admin ON app.report_snapshots FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

GRANT SELECT ON TABLE app.report_snapshots TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.reports
-- created in 20261129190100_moderation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.reports (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    reporter_id uuid NOT NULL,
    subject_type app.report_subject_type NOT NULL,
    subject_id uuid NOT NULL,
    reason app.report_reason NOT NULL,
    note text,
    snapshot_id uuid NOT NULL,
    status app.report_status DEFAULT 'open'::app.report_status NOT NULL,
    action app.moderation_action,
    resolution_note text,
    resolved_by uuid,
    resolved_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT reports_action_when_actioned CHECK (((action IS NULL) OR (status = 'actioned'::app.report_status))),
    CONSTRAINT reports_note_check CHECK ((char_length(note) <= 1000)),
    CONSTRAINT reports_resolution_complete CHECK ((((status = 'open'::app.report_status) = (resolved_at IS NULL)) AND ((status = 'open'::app.report_status) = (resolution_note IS NULL)))),
    CONSTRAINT reports_resolution_note_check CHECK (((char_length(resolution_note) >= 1) AND (char_length(resolution_note) <= 1000)))
);

COMMENT ON TABLE app.reports IS 'A person''s report of a message, user, product or vendor, and how an ADMIN resolved it. At most one open report per reporter and subject; resolving one resolves every open report on its subject. Read by the reporter (their own) and ADMINs; written only by app.create_report and app.resolve_report.';

COMMENT ON COLUMN app.reports.note IS 'The reporter''s note, up to 1,000 characters.';

COMMENT ON COLUMN app.reports.resolution_note IS 'The resolving ADMIN''s note (required), shown to ADMINs as resolutionNote.';

ALTER TABLE ONLY app.reports
    ADD CONSTRAINT reports_pkey PRIMARY KEY (id);

CREATE UNIQUE INDEX reports_one_open_per_reporter ON app.reports USING btree (reporter_id, subject_type, subject_id) WHERE (status = 'open'::app.report_status);

CREATE INDEX reports_open_subject_idx ON app.reports USING btree (subject_type, subject_id) WHERE (status = 'open'::app.report_status);

CREATE INDEX reports_queue_idx ON app.reports USING btree (status, created_at, id);

CREATE INDEX reports_reporter_idx ON app.reports USING btree (reporter_id, created_at);

CREATE INDEX reports_resolved_by_idx ON app.reports USING btree (resolved_by);

CREATE INDEX reports_snapshot_idx ON app.reports USING btree (snapshot_id);

ALTER TABLE ONLY app.reports
    ADD CONSTRAINT reports_reporter_id_fkey FOREIGN KEY (reporter_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.reports
    ADD CONSTRAINT reports_resolved_by_fkey FOREIGN KEY (resolved_by) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY app.reports
    ADD CONSTRAINT reports_snapshot_id_fkey FOREIGN KEY (snapshot_id) REFERENCES app.report_snapshots(id) ON DELETE RESTRICT;

ALTER TABLE app.reports ENABLE ROW LEVEL SECURITY;

CREATE POLICY reports_select_reporter_or_admin ON app.reports FOR SELECT TO authenticated USING (((reporter_id = ( SELECT auth.uid() AS uid)) OR ( SELECT app.is_admin() AS is_admin)));

GRANT SELECT ON TABLE app.reports TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.create_report
-- created in 20261129190100_moderation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.create_report(kind app.report_subject_type, target_id uuid, report_reason app.report_reason, report_note text DEFAULT NULL::text) RETURNS app.reports
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := (select auth.uid());
  shot jsonb;
  shot_id uuid;
  created app.reports;
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    raise exception 'only a SUBSCRIBER or above reports' using errcode = '42501';
  end if;
  if char_length(report_note) > 1000 then
    raise exception 'a note has at most 1000 characters' using errcode = 'AG400';
  end if;
  shot := app_private.report_subject_snapshot(kind, target_id);
  if shot is null then
    raise exception '% not found', kind using errcode = 'AG404';
  end if;
  if kind = 'user' and target_id = me then
    raise exception 'you cannot report yourself' using errcode = 'AG422';
  end if;
  -- One subject at a time: the snapshot of its open reports is taken once.
  perform pg_advisory_xact_lock(hashtextextended('app.reports:' || kind || ':' || target_id, 0));
  if exists (select 1 from app.reports r
             where r.reporter_id = me and r.subject_type = kind and r.subject_id = target_id
               and r.status = 'open') then
    raise exception 'you already reported this; a moderator will look at it' using errcode = 'AG409';
  end if;
  select r.snapshot_id into shot_id from app.reports r
  where r.subject_type = kind and r.subject_id = target_id and r.status = 'open'
  order by r.created_at, r.id limit 1;
  if shot_id is null then
    insert into app.report_snapshots (subject_type, subject_id, snapshot)
    values (kind, target_id, shot) returning id into shot_id;
  end if;
  insert into app.reports (reporter_id, subject_type, subject_id, reason, note, snapshot_id)
  values (me, kind, target_id, report_reason, nullif(btrim(report_note), ''), shot_id)
  returning * into created;
  return created;
end;
$$;

COMMENT ON FUNCTION app.create_report(kind app.report_subject_type, target_id uuid, report_reason app.report_reason, report_note text) IS 'A SUBSCRIBER or above reports a subject they can see (AG404 otherwise, the same answer as for one that does not exist): one open report per reporter and subject (AG409), never oneself (AG422). The first open report on a subject takes its snapshot; later ones share it. security definer: reporters may not write reports or snapshots directly, and the snapshot reads what the reporter saw; every rule is checked here. The per-user rate limit is the API''s (enforceRateLimit).';

REVOKE ALL ON FUNCTION app.create_report(kind app.report_subject_type, target_id uuid, report_reason app.report_reason, report_note text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.create_report(kind app.report_subject_type, target_id uuid, report_reason app.report_reason, report_note text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.resolve_report
-- created in 20261129190100_moderation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.resolve_report(target_report_id uuid, new_status app.report_status, chosen_action app.moderation_action, admin_note text) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  caller uuid := app_private.lock_admin_caller();
  target app.reports;
  resolved uuid[];
  reporters uuid[];
  affected_user uuid;
  subject_word text;
  body text;
begin
  if char_length(coalesce(btrim(admin_note), '')) = 0 or char_length(admin_note) > 1000 then
    raise exception 'a resolution needs a note of 1 to 1000 characters' using errcode = 'AG400';
  end if;
  if new_status is null or new_status = 'open' then
    raise exception 'a report is resolved as dismissed or actioned' using errcode = 'AG400';
  end if;
  if chosen_action is not null and new_status <> 'actioned' then
    raise exception 'an action goes with the status actioned' using errcode = 'AG422';
  end if;
  select * into target from app.reports r where r.id = target_report_id;
  if not found then
    raise exception 'report not found' using errcode = 'AG404';
  end if;
  -- Every open report on the subject, locked in one order (two ADMINs resolving two reports of
  -- one subject wait for each other instead of deadlocking); one resolved meanwhile drops out.
  perform 1 from app.reports r
  where r.subject_type = target.subject_type and r.subject_id = target.subject_id
    and r.status = 'open'
  order by r.id
  for update;
  select * into target from app.reports r where r.id = target_report_id;
  if target.status <> 'open' then
    raise exception 'this report was already resolved' using errcode = 'AG409';
  end if;
  if (chosen_action = 'delete_message' and target.subject_type <> 'message')
     or (chosen_action = 'suspend_user' and target.subject_type not in ('user', 'message'))
     or (chosen_action = 'hide_product' and target.subject_type <> 'product') then
    raise exception '% does not fit a report on a %', chosen_action, target.subject_type
      using errcode = 'AG422';
  end if;

  with done as (
    update app.reports r
    set status = new_status, action = chosen_action, resolution_note = btrim(admin_note),
        resolved_by = caller, resolved_at = now()
    where r.subject_type = target.subject_type and r.subject_id = target.subject_id
      and r.status = 'open'
    returning r.id, r.reporter_id
  )
  select array_agg(d.id order by d.id), array_agg(d.reporter_id order by d.id)
  into resolved, reporters
  from done d;

  -- The action, through the domain's own functions (their rules apply; a refusal rolls the
  -- resolution back with it).
  if target.subject_type = 'user' then
    affected_user := target.subject_id;
  elsif target.subject_type = 'message' then
    select m.sender_id into affected_user from app.messages m where m.id = target.subject_id;
  end if;
  if chosen_action = 'delete_message' then
    perform app.delete_message(target.subject_id);
  elsif chosen_action = 'suspend_user' then
    if affected_user is null then
      raise exception 'the message''s sender is gone' using errcode = 'AG422';
    end if;
    perform app.change_user_status(affected_user, 'suspended', admin_note);
  elsif chosen_action = 'hide_product' then
    update app.products p set status = 'hidden' where p.id = target.subject_id;
    if not found then
      raise exception 'product not found' using errcode = 'AG404';
    end if;
  end if;

  perform app_private.record_security_event(
    'moderation.report_resolved',
    case when chosen_action is null then 'info' else 'warning' end::app.security_severity,
    affected_user,
    jsonb_build_object('by', caller, 'reportId', target.id, 'reportIds', to_jsonb(resolved),
                       'subject', jsonb_build_object('type', target.subject_type, 'id', target.subject_id),
                       'status', new_status, 'action', chosen_action, 'note', btrim(admin_note)));

  subject_word := target.subject_type::text;
  body := case when new_status = 'actioned'
    then 'A moderator reviewed the ' || subject_word || ' you reported and took action. Thank you for reporting it.'
    else 'A moderator reviewed the ' || subject_word || ' you reported and found it within the rules.' end;
  -- One SYSTEM notification per resolved report, to its reporter, through the one path.
  perform 1 from app_private.notify_rows(
    'SYSTEM',
    reporters,
    array_fill('Your report was reviewed'::text, array[cardinality(reporters)]),
    array_fill(body, array[cardinality(reporters)]),
    array(select jsonb_build_object('kind', 'report_resolved', 'reportId', x.id,
                                    'status', new_status, 'subjectType', target.subject_type)
          from unnest(resolved) with ordinality as x (id, n) order by x.n));
  return target.id;
end;
$$;

COMMENT ON FUNCTION app.resolve_report(target_report_id uuid, new_status app.report_status, chosen_action app.moderation_action, admin_note text) IS 'An ADMIN resolves a report, and with it every open report on the same subject: dismissed, or actioned with an action that fits the subject (AG422 otherwise) carried out by the domain''s own function (app.delete_message, app.change_user_status, the product''s hidden status). The resolution, the action, the security event moderation.report_resolved and each reporter''s SYSTEM notification commit together or not at all; a report resolved meanwhile is AG409 (its open reports are locked in id order, so two ADMINs act once). security definer: it writes reports, events and notifications no API role may write; every rule is checked here.';

REVOKE ALL ON FUNCTION app.resolve_report(target_report_id uuid, new_status app.report_status, chosen_action app.moderation_action, admin_note text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.resolve_report(target_report_id uuid, new_status app.report_status, chosen_action app.moderation_action, admin_note text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_product_hidden
-- created in 20261129190100_moderation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_product_hidden() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if new.status is distinct from old.status and 'hidden' in (old.status::text, new.status::text)
     and not app.is_admin() then
    raise exception 'a product hidden by a moderator stays hidden until an ADMIN lifts it'
      using errcode = 'AG403';
  end if;
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.guard_product_hidden() IS 'Only an ADMIN sets or lifts a product''s hidden status (moderation''s hide_product): its vendor may still edit it but cannot put it back in the catalog (AG403). security definer: app.is_admin reads the caller''s row, whoever the statement''s role.';

REVOKE ALL ON FUNCTION app_private.guard_product_hidden() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.report_subject_snapshot
-- created in 20261129190100_moderation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.report_subject_snapshot(kind app.report_subject_type, target_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
  me uuid := (select auth.uid());
  result jsonb;
begin
  -- The visibility rules that exist for each kind, as the caller (auth.uid()).
  if kind = 'message' then
    select jsonb_build_object(
      'type', 'message', 'id', m.id, 'conversationId', m.conversation_id,
      'sender', case when u.id is null then null
                     else jsonb_build_object('id', u.id, 'name', u.name) end,
      'content', m.content,
      'createdAt', to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
      'editedAt', to_char(m.edited_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
    into result
    from app.messages m left join app.users u on u.id = m.sender_id
    where m.id = target_id and m.deleted_at is null
      and m.conversation_id in (select app.my_conversation_ids());
  elsif kind = 'user' then
    select jsonb_build_object('type', 'user', 'id', u.id, 'name', u.name, 'bio', u.bio,
                              'image', u.image, 'role', u.role)
    into result
    from app.users u
    where u.id = target_id and u.status = 'active' and me is not null;
  elsif kind = 'product' then
    result := app.get_product(target_id);
    if result is not null then
      result := jsonb_build_object('type', 'product') || result;
    end if;
  elsif kind = 'vendor' then
    select jsonb_build_object('type', 'vendor', 'id', v.id, 'name', v.name, 'slug', v.slug,
                              'description', v.description, 'status', v.status)
    into result
    from app.vendors v
    where v.id = target_id
      and (v.status = 'approved' or v.id in (select app.my_vendor_ids()) or app.is_admin());
  end if;
  return result;
end;
$$;

COMMENT ON FUNCTION app_private.report_subject_snapshot(kind app.report_subject_type, target_id uuid) IS 'The subject of a report as JSON, or null when the caller (auth.uid()) cannot see it, by the rules that exist: a message of a conversation the caller is in (not a tombstone), an active user, a product app.get_product shows the caller, an approved vendor (or the caller''s own). Called by app.create_report (security definer), so it reads with its owner''s rights and applies those rules itself.';

REVOKE ALL ON FUNCTION app_private.report_subject_snapshot(kind app.report_subject_type, target_id uuid) FROM PUBLIC;
