-- The current schema of Agora, generated from the migrations by `npm test` (stack/schema-dump.ts).
-- Do not edit: change a migration in supabase/migrations/, run `npm test`, commit both.
-- Every table and function says why it exists in its COMMENT.

--
-- PostgreSQL database dump
--

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: app; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA app;

--
-- Name: SCHEMA app; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON SCHEMA app IS 'Agora data read and written by users through RLS.';

--
-- Name: app_private; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA app_private;

--
-- Name: SCHEMA app_private; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON SCHEMA app_private IS 'Agora secrets and server-only state; never granted to API roles.';

--
-- Name: conversation_type; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.conversation_type AS ENUM (
    'direct',
    'group'
);

--
-- Name: TYPE conversation_type; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.conversation_type IS 'Direct: exactly two people, one per pair. Group: a titled set with a creator.';

--
-- Name: nft_standard; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.nft_standard AS ENUM (
    'ERC721',
    'ERC1155'
);

--
-- Name: TYPE nft_standard; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.nft_standard IS 'The token standards of the NFT collections the platform indexes.';

--
-- Name: notification_batch_status; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.notification_batch_status AS ENUM (
    'queued',
    'sending',
    'done'
);

--
-- Name: TYPE notification_batch_status; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.notification_batch_status IS 'queued: accepted, nothing written yet; sending: inbox rows written, deliveries going out; done.';

--
-- Name: notification_priority; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.notification_priority AS ENUM (
    'low',
    'normal',
    'high',
    'critical'
);

--
-- Name: TYPE notification_priority; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.notification_priority IS 'How urgent a notification is, in rank order; critical ignores preferences and quiet hours.';

--
-- Name: notification_type; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.notification_type AS ENUM (
    'OPPORTUNITY',
    'MESSAGE',
    'ENTITY',
    'SYSTEM',
    'WALLET'
);

--
-- Name: TYPE notification_type; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.notification_type IS 'What a notification is about; preferences are chosen per type.';

--
-- Name: order_actor; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.order_actor AS ENUM (
    'buyer',
    'vendor',
    'admin',
    'system'
);

--
-- Name: TYPE order_actor; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.order_actor IS 'Who moves an order: its buyer, its vendor''s owner, an ADMIN, or the system (payments, expiry, auto-completion).';

--
-- Name: order_status; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.order_status AS ENUM (
    'pending_payment',
    'paid',
    'processing',
    'shipped',
    'delivered',
    'completed',
    'cancelled',
    'refunded'
);

--
-- Name: TYPE order_status; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.order_status IS 'Where an order is; app.order_transitions says which moves exist and who may make them.';

--
-- Name: payment_status; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.payment_status AS ENUM (
    'pending',
    'succeeded',
    'failed',
    'refunded'
);

--
-- Name: TYPE payment_status; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.payment_status IS 'The payment of a checkout and of each of its orders: pending (not paid yet), succeeded, failed (the last attempt failed; payable again until the reservation expires), refunded (a refund is owed or made: app.refunds says which).';

--
-- Name: payouts_status; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.payouts_status AS ENUM (
    'not_started',
    'pending',
    'active',
    'restricted'
);

--
-- Name: TYPE payouts_status; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.payouts_status IS 'The vendor''s payout account: not_started (none yet), pending (onboarding not finished), active (can receive transfers), restricted (the provider needs more from the vendor). Only active accounts are paid; the others'' settlements are held.';

--
-- Name: product_status; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.product_status AS ENUM (
    'draft',
    'active',
    'archived'
);

--
-- Name: TYPE product_status; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.product_status IS 'draft: visible to its vendor only; active: in the catalog (when its vendor is approved) and orderable; archived: withdrawn, kept for the orders that name it.';

--
-- Name: push_platform; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.push_platform AS ENUM (
    'web',
    'ios',
    'android'
);

--
-- Name: TYPE push_platform; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.push_platform IS 'The kind of device a push token belongs to.';

--
-- Name: refund_status; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.refund_status AS ENUM (
    'pending',
    'succeeded',
    'failed'
);

--
-- Name: TYPE refund_status; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.refund_status IS 'A refund owed to a buyer: pending (queued for the payment provider), succeeded (the provider accepted it), failed (the provider refused it; an operator must look).';

--
-- Name: security_severity; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.security_severity AS ENUM (
    'info',
    'warning',
    'critical'
);

--
-- Name: TYPE security_severity; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.security_severity IS 'How urgently an admin should look at a security event.';

--
-- Name: settlement_status; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.settlement_status AS ENUM (
    'pending',
    'paid',
    'held',
    'failed'
);

--
-- Name: TYPE settlement_status; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.settlement_status IS 'pending: a transfer is queued; paid: transferred (or nothing to pay); held: not paid yet (the payout account is not active, or the net is negative and carried into the next settlement); failed: the provider refused the transfer (an operator must look).';

--
-- Name: user_role; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.user_role AS ENUM (
    'VISITOR',
    'SUBSCRIBER',
    'MEMBER',
    'CONFIDENTIAL',
    'ADMIN'
);

--
-- Name: TYPE user_role; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.user_role IS 'The five roles in rank order, so that enum comparison is rank comparison.';

--
-- Name: user_status; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.user_status AS ENUM (
    'active',
    'suspended'
);

--
-- Name: TYPE user_status; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.user_status IS 'A suspended user authenticates nothing and is in no list.';

--
-- Name: vendor_status; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.vendor_status AS ENUM (
    'pending',
    'approved',
    'rejected',
    'suspended'
);

--
-- Name: TYPE vendor_status; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.vendor_status IS 'pending: applied, waiting for an ADMIN; approved: sells; rejected: refused (the owner may apply again); suspended: stopped by an ADMIN, its products leave the catalog and it cannot sell.';

--
-- Name: wallet_token_kind; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.wallet_token_kind AS ENUM (
    'native',
    'utility',
    'governance',
    'staking',
    'custom'
);

--
-- Name: TYPE wallet_token_kind; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.wallet_token_kind IS 'The five kinds of token a wallet holds: the chain''s native currency, the platform''s utility, governance and staking-rewards ERC-20s, and ERC-20s a user adds.';

--
-- Name: wallet_transaction_direction; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.wallet_transaction_direction AS ENUM (
    'out',
    'in'
);

--
-- Name: TYPE wallet_transaction_direction; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.wallet_transaction_direction IS 'out: sent from the wallet through the platform; in: a transfer to the wallet seen on the chain.';

--
-- Name: wallet_transaction_status; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.wallet_transaction_status AS ENUM (
    'pending',
    'submitted',
    'confirmed',
    'failed',
    'expired'
);

--
-- Name: TYPE wallet_transaction_status; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.wallet_transaction_status IS 'pending: validated, waiting for the owner''s confirm until it expires; submitted: signed with its nonce and sent (or being sent); confirmed: mined with enough confirmations; failed: reverted, or refused by the node; expired: never confirmed in time. Incoming transfers are submitted until they have enough confirmations.';

--
-- Name: delivery_channel; Type: TYPE; Schema: app_private; Owner: -
--

CREATE TYPE app_private.delivery_channel AS ENUM (
    'push',
    'email'
);

--
-- Name: TYPE delivery_channel; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TYPE app_private.delivery_channel IS 'The channels that leave the platform.';

--
-- Name: delivery_status; Type: TYPE; Schema: app_private; Owner: -
--

CREATE TYPE app_private.delivery_status AS ENUM (
    'queued',
    'sent',
    'failed',
    'pruned'
);

--
-- Name: TYPE delivery_status; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TYPE app_private.delivery_status IS 'queued: waiting (for its job, quiet hours or a retry); sent: accepted by FCM or the mailer; failed: not delivered, error_code says why; pruned: FCM refused the token, which was deleted.';

--
-- Name: job_state; Type: TYPE; Schema: app_private; Owner: -
--

CREATE TYPE app_private.job_state AS ENUM (
    'queued',
    'running',
    'done',
    'dead'
);

--
-- Name: TYPE job_state; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TYPE app_private.job_state IS 'queued: waits for run_at; running: claimed under a lease (locked_until); done: succeeded; dead: failed its last attempt or failed permanently, kept for operators.';

--
-- Name: abandon_checkout(uuid, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.abandon_checkout(target_checkout_id uuid, idempotency_key text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if not exists (
    select 1 from app.checkouts c
    where c.id = target_checkout_id and c.buyer_id = auth.uid() and c.payment_intent_id is null
  ) then
    raise exception 'checkout not found' using errcode = 'AG404';
  end if;
  perform app_private.cancel_unpaid_checkout(target_checkout_id, 'system', null,
                                             'the payment provider did not answer');
  if idempotency_key is not null then
    delete from app_private.idempotency_keys k
    where k.user_id = auth.uid() and k.key = abandon_checkout.idempotency_key;
    update app.checkouts c set idempotency_key = null where c.id = target_checkout_id;
  end if;
end;
$$;

--
-- Name: FUNCTION abandon_checkout(target_checkout_id uuid, idempotency_key text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.abandon_checkout(target_checkout_id uuid, idempotency_key text) IS 'When the payment provider does not answer (503 payment_provider_unavailable), cancels the caller''s checkout that has no payment intent yet (its stock goes back at once) and frees its Idempotency-Key, so a retry starts afresh. security definer: as app.create_checkout.';

--
-- Name: add_participants(uuid, uuid[]); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.add_participants(target_conversation_id uuid, user_ids uuid[]) RETURNS SETOF uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  conv app.conversations;
  max_participants integer := app.config_int('limits', 'groupMaxParticipants');
begin
  select * into conv from app.conversations c where c.id = target_conversation_id for update;
  if not found or not exists (
    select 1 from app.conversation_participants p where p.conversation_id = conv.id and p.user_id = me
  ) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  if conv.type <> 'group' or conv.created_by is distinct from me or not app.has_role('SUBSCRIBER') then
    raise exception 'only the group''s creator adds people' using errcode = 'AG403';
  end if;
  if (select count(*) from app.users u where u.id = any(user_ids) and u.status = 'active' and u.role >= 'SUBSCRIBER')
     <> (select count(distinct x) from unnest(user_ids) x) then
    raise exception 'every participant must be an active user who can message' using errcode = 'AG422';
  end if;
  if (select count(*) from app.conversation_participants p where p.conversation_id = conv.id)
     + (select count(distinct x) from unnest(user_ids) x
        where not exists (select 1 from app.conversation_participants p where p.conversation_id = conv.id and p.user_id = x))
     > max_participants then
    raise exception 'a group has at most % participants', max_participants using errcode = 'AG422';
  end if;
  return query
    insert into app.conversation_participants (conversation_id, user_id, added_by)
    select conv.id, x, me from (select distinct unnest(user_ids) as x) ids
    on conflict do nothing
    returning user_id;
end;
$$;

--
-- Name: FUNCTION add_participants(target_conversation_id uuid, user_ids uuid[]); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.add_participants(target_conversation_id uuid, user_ids uuid[]) IS 'The group''s creator adds people (the conversation row lock serializes additions against the size limit). Returns the ids actually added; people already in are skipped. security definer as app.create_conversation.';

--
-- Name: admin_messaging_stats(text, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  result jsonb;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads platform analytics' using errcode = '42501';
  end if;
  if bucket not in ('day', 'week', 'month') then
    raise exception 'unknown interval %', bucket using errcode = 'AG400';
  end if;
  with buckets as (
    select generate_series(date_trunc(bucket, range_from, 'UTC'), range_to, ('1 ' || bucket)::interval) as t
  ),
  messages as (
    select date_trunc(bucket, m.created_at, 'UTC') as t, count(*)::int as n, count(distinct m.sender_id)::int as senders
    from app.messages m where m.created_at >= range_from and m.created_at < range_to group by 1
  ),
  conversations as (
    select date_trunc(bucket, c.created_at, 'UTC') as t, count(*)::int as n
    from app.conversations c where c.created_at >= range_from and c.created_at < range_to group by 1
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'conversations', (select count(*) from app.conversations),
      'messages', (select count(*) from app.messages where deleted_at is null)
    ),
    'messages', (select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(m.n, 0)) order by b.t)
                 from buckets b left join messages m on m.t = b.t),
    'activeSenders', (select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(m.senders, 0)) order by b.t)
                      from buckets b left join messages m on m.t = b.t),
    'conversationsCreated', (select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(c.n, 0)) order by b.t)
                             from buckets b left join conversations c on c.t = b.t)
  ) into result;
  return result;
end;
$$;

--
-- Name: FUNCTION admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) IS 'Messages, active senders and new conversations per interval, zero-filled, with totals: counts only, never content. security definer because ADMINs cannot read conversations they are not in, yet the platform''s figures count them all; it checks the caller is an ADMIN and returns aggregates only.';

--
-- Name: admin_wallet_stats(text, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.admin_wallet_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  result jsonb;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads platform analytics' using errcode = '42501';
  end if;
  if bucket not in ('day', 'week', 'month') then
    raise exception 'unknown interval %', bucket using errcode = 'AG400';
  end if;
  with buckets as (
    select generate_series(date_trunc(bucket, range_from, 'UTC'), range_to, ('1 ' || bucket)::interval) as t
  ),
  created as (
    select date_trunc(bucket, w.created_at, 'UTC') as t, count(*)::int as n
    from app.wallets w where w.created_at >= range_from and w.created_at < range_to group by 1
  ),
  volume as (
    select x.chain_id, x.token_kind, x.token_address, x.token_symbol, x.token_decimals,
           date_trunc(bucket, x.confirmed_at, 'UTC') as t, sum(x.amount) as amount, count(*)::int as n
    from app.wallet_transactions x
    where x.direction = 'out' and x.status = 'confirmed'
      and x.confirmed_at >= range_from and x.confirmed_at < range_to
    group by 1, 2, 3, 4, 5, 6
  ),
  tokens as (
    select distinct v.chain_id, v.token_kind, v.token_address, v.token_symbol, v.token_decimals from volume v
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'wallets', (select count(*) from app.wallets),
      'exported', (select count(*) from app.wallets where exported_at is not null),
      'transactions', (select count(*) from app.wallet_transactions)
    ),
    'transactionsByStatus', (
      select jsonb_object_agg(s.status, coalesce(x.n, 0))
      from unnest(enum_range(null::app.wallet_transaction_status)) as s (status)
      left join (
        select t.status, count(*)::int as n from app.wallet_transactions t group by t.status
      ) x on x.status = s.status
    ),
    'transactionsByDirection', jsonb_build_object(
      'out', (select count(*) from app.wallet_transactions where direction = 'out'),
      'in', (select count(*) from app.wallet_transactions where direction = 'in')
    ),
    'walletsCreated', (select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(c.n, 0)) order by b.t)
                       from buckets b left join created c on c.t = b.t),
    'volume', coalesce((
      select jsonb_agg(jsonb_build_object(
        'token', jsonb_build_object('kind', k.token_kind, 'symbol', k.token_symbol,
                                    'address', k.token_address, 'decimals', k.token_decimals,
                                    'chainId', k.chain_id),
        'series', (select jsonb_agg(jsonb_build_object(
                            't', b.t, 'amount', coalesce(v.amount, 0)::text, 'transfers', coalesce(v.n, 0))
                          order by b.t)
                   from buckets b left join volume v
                     on v.t = b.t and v.chain_id = k.chain_id and v.token_symbol = k.token_symbol
                    and v.token_address is not distinct from k.token_address)
      ) order by k.token_kind, k.token_symbol)
      from tokens k
    ), '[]'::jsonb)
  ) into result;
  return result;
end;
$$;

--
-- Name: FUNCTION admin_wallet_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.admin_wallet_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) IS 'Wallet figures for the admin analytics: totals, transactions by status and direction, wallets created per interval and the confirmed outgoing volume per token per interval (base units as decimal strings), zero-filled. security definer because wallets and transactions are readable only by their owners; it checks the caller is an ADMIN and returns aggregates only, never an address.';

--
-- Name: apply_for_vendor(text, text, text, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.apply_for_vendor(vendor_name text, vendor_description text, vendor_contact_email text, vendor_country text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  base_slug text;
  candidate text;
  n integer := 1;
  created app.vendors;
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    raise exception 'applying as a vendor needs the SUBSCRIBER role' using errcode = 'AG403';
  end if;
  if exists (
    select 1 from app.vendors v
    where v.owner_id = me and v.status in ('pending', 'approved', 'suspended')
  ) then
    raise exception 'you already have a vendor application or a vendor' using errcode = 'AG409';
  end if;
  base_slug := left(btrim(regexp_replace(lower(vendor_name), '[^a-z0-9]+', '-', 'g'), '-'), 60);
  if base_slug = '' then
    base_slug := 'vendor';
  end if;
  candidate := base_slug;
  while exists (select 1 from app.vendors v where v.slug = candidate) loop
    n := n + 1;
    candidate := base_slug || '-' || n;
  end loop;
  begin
    insert into app.vendors (owner_id, name, slug, description, contact_email, country)
    values (me, btrim(vendor_name), candidate, coalesce(vendor_description, ''),
            btrim(vendor_contact_email), upper(vendor_country))
    returning * into created;
  exception when unique_violation then
    raise exception 'you already have a vendor application or a vendor (or the name is taken)'
      using errcode = 'AG409';
  end;
  return app.vendor_json(created, true);
end;
$$;

--
-- Name: FUNCTION apply_for_vendor(vendor_name text, vendor_description text, vendor_contact_email text, vendor_country text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.apply_for_vendor(vendor_name text, vendor_description text, vendor_contact_email text, vendor_country text) IS 'A user applies to sell (status pending): SUBSCRIBER and up (AG403), one live (pending, approved or suspended) vendor per user (AG409, enforced by the partial unique index vendors_one_live_per_owner). security definer: vendors have no insert grant, so every row comes through this check.';

--
-- Name: attach_payment_intent(uuid, text, text, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.attach_payment_intent(target_checkout_id uuid, intent_id text, intent_client_secret text, idempotency_key text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  checkout app.checkouts;
  answer jsonb;
begin
  select * into checkout from app.checkouts c
  where c.id = target_checkout_id and c.buyer_id = auth.uid()
  for update;
  if not found then
    raise exception 'checkout not found' using errcode = 'AG404';
  end if;
  if checkout.payment_intent_id is not null and checkout.payment_intent_id <> intent_id then
    raise exception 'the checkout has another payment intent' using errcode = 'AG409';
  end if;
  update app.checkouts c set payment_intent_id = intent_id where c.id = checkout.id;
  insert into app_private.checkout_secrets (checkout_id, client_secret)
  values (checkout.id, intent_client_secret)
  on conflict (checkout_id) do update set client_secret = excluded.client_secret;
  -- Cancelled meanwhile (expiry): the intent must not stay payable.
  if checkout.closed_at is not null and checkout.payment_status <> 'succeeded' then
    perform app_private.enqueue_job('store.payment_intent_cancel',
      jsonb_build_object('checkoutId', checkout.id), now(), 'pi-cancel:' || checkout.id);
  end if;
  answer := app_private.checkout_json(checkout.id, intent_client_secret);
  if idempotency_key is not null then
    perform app.store_idempotent_response(idempotency_key, answer);
  end if;
  return answer;
end;
$$;

--
-- Name: FUNCTION attach_payment_intent(target_checkout_id uuid, intent_id text, intent_client_secret text, idempotency_key text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.attach_payment_intent(target_checkout_id uuid, intent_id text, intent_client_secret text, idempotency_key text) IS 'Attaches the PaymentIntent the API created (idempotently: the same intent again is fine, another is AG409) to the caller''s checkout, keeps its client secret apart, and returns the checkout answer, stored for the idempotency key. security definer: checkouts have no update grant; only the buyer''s own checkout is touched.';

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: attachments; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.attachments (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    uploader_id uuid NOT NULL,
    conversation_id uuid,
    message_id uuid,
    name text NOT NULL,
    content_type text NOT NULL,
    size bigint NOT NULL,
    storage_key text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT attachments_attached_together CHECK (((conversation_id IS NULL) = (message_id IS NULL))),
    CONSTRAINT attachments_content_type_check CHECK (((char_length(content_type) >= 3) AND (char_length(content_type) <= 255))),
    CONSTRAINT attachments_name_check CHECK (((char_length(name) >= 1) AND (char_length(name) <= 255))),
    CONSTRAINT attachments_size_check CHECK ((size >= 0))
);

--
-- Name: TABLE attachments; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.attachments IS 'Files: visible to their uploader, and once attached (exactly once, to the uploader''s own message) to the participants of that conversation.';

--
-- Name: attachment_json(app.attachments); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.attachment_json(a app.attachments) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'id', a.id, 'name', a.name, 'contentType', a.content_type, 'size', a.size,
    'url', '/api/attachments/' || a.id::text
  )
$$;

--
-- Name: FUNCTION attachment_json(a app.attachments); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.attachment_json(a app.attachments) IS 'One attachment as the API shows it. Inlinable pure SQL with no pinned search_path, like app.message_object and for the same reason.';

--
-- Name: can_read_topic(text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.can_read_topic(topic text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return exists (select 1 from app.readable_topics() t where t = topic);
end;
$$;

--
-- Name: FUNCTION can_read_topic(topic text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.can_read_topic(topic text) IS 'Whether the caller may read one realtime topic: membership of app.readable_topics(), so one rule serves every transport.';

--
-- Name: can_write_topic(text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.can_write_topic(topic text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return topic like 'conversation:%' and app.can_read_topic(topic);
end;
$$;

--
-- Name: FUNCTION can_write_topic(topic text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.can_write_topic(topic text) IS 'Whether the caller may broadcast or track presence on a realtime topic: participants of a conversation may (presence, client-side signals); user: and admin topics are written by the server only (realtime.send), never by clients. security definer: it reads memberships through app.can_read_topic; it returns a boolean.';

--
-- Name: change_order_status(uuid, app.order_status, text, text, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.change_order_status(target_order_id uuid, to_status app.order_status, move_reason text DEFAULT NULL::text, tracking text DEFAULT NULL::text, ship_carrier text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  target app.orders;
  actors app.order_actor[] := '{}';
  acting app.order_actor;
  allowed jsonb;
begin
  select * into target from app.orders o where o.id = target_order_id;
  if found and me is not null and app.has_role('SUBSCRIBER') then
    if target.buyer_id = me then
      actors := actors || 'buyer'::app.order_actor;
    end if;
    if target.vendor_id in (select app.my_vendor_ids()) then
      actors := actors || 'vendor'::app.order_actor;
    end if;
    if app.is_admin() then
      actors := actors || 'admin'::app.order_actor;
    end if;
  end if;
  if cardinality(actors) = 0 then
    raise exception 'order not found' using errcode = 'AG404';
  end if;
  if not exists (
    select 1 from app.order_transitions t where t.to_status = change_order_status.to_status and t.actor = any(actors)
  ) then
    raise exception 'you may not move an order to %', to_status using errcode = 'AG403';
  end if;

  -- Lock order: the checkout, then the order (then products, in move_order).
  perform 1 from app.checkouts c where c.id = target.checkout_id for update;
  select * into target from app.orders o where o.id = target_order_id for update;

  select t.actor into acting from app.order_transitions t
  where t.from_status = target.status and t.to_status = change_order_status.to_status and t.actor = any(actors)
  order by array_position(array['buyer', 'vendor', 'admin']::app.order_actor[], t.actor)
  limit 1;
  if acting is null then
    select coalesce(jsonb_agg(distinct t.to_status), '[]'::jsonb) into allowed
    from app.order_transitions t where t.from_status = target.status and t.actor = any(actors);
    raise exception 'an order that is % cannot become %', target.status, to_status
      using errcode = 'AG422', hint = 'invalid_transition',
            detail = jsonb_build_object('from', target.status, 'to', to_status, 'allowed', allowed)::text;
  end if;
  if to_status = 'shipped' and char_length(btrim(coalesce(tracking, ''))) = 0 then
    raise exception 'shipping needs a trackingNumber' using errcode = 'AG400',
      detail = jsonb_build_array(jsonb_build_object('path', 'trackingNumber', 'message', 'required when shipping'))::text;
  end if;

  if target.status = 'pending_payment' and to_status = 'cancelled' then
    -- One payment intent pays the whole checkout: an unpaid checkout is cancelled whole.
    perform app_private.cancel_unpaid_checkout(target.checkout_id, acting, me,
                                               coalesce(move_reason, 'cancelled by the ' || acting));
  else
    perform app_private.move_order(target, to_status, acting, me, move_reason,
                                   btrim(tracking), nullif(btrim(ship_carrier), ''));
  end if;
  select * into target from app.orders o where o.id = target_order_id;
  return app.order_json(target);
end;
$$;

--
-- Name: FUNCTION change_order_status(target_order_id uuid, to_status app.order_status, move_reason text, tracking text, ship_carrier text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.change_order_status(target_order_id uuid, to_status app.order_status, move_reason text, tracking text, ship_carrier text) IS 'A person moves an order: buyer, vendor owner or ADMIN (the caller may hold several of these parts; the move is recorded under the first that may make it). 404 for an order the caller cannot see, then 403 for a status the caller may never set, then 422 invalid_transition (details: from, to, allowed), then 400 for shipping without a tracking number. Cancelling an unpaid order cancels its whole checkout. security definer: orders and stock have no write grants; every rule is checked here.';

--
-- Name: role_changes; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.role_changes (
    id bigint NOT NULL,
    user_id uuid NOT NULL,
    previous_role app.user_role NOT NULL,
    new_role app.user_role NOT NULL,
    changed_by uuid,
    reason text NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT role_changes_reason_check CHECK (((char_length(reason) >= 1) AND (char_length(reason) <= 500)))
);

--
-- Name: TABLE role_changes; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.role_changes IS 'The audit trail of role changes (who, why, before and after), written only by a trigger on app.users so it cannot be forged.';

--
-- Name: change_user_role(uuid, app.user_role, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text) RETURNS app.role_changes
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  caller uuid := (select auth.uid());
  caller_is_admin boolean;
  previous app.user_role;
  change app.role_changes;
begin
  if caller is null then
    raise exception 'only an ADMIN changes roles' using errcode = '42501';
  end if;
  perform pg_advisory_xact_lock(hashtext('app.change_user_role'));
  select u.role = 'ADMIN' and u.status = 'active' into caller_is_admin
  from app.users u where u.id = caller
  for share;
  if not coalesce(caller_is_admin, false) then
    raise exception 'only an ADMIN changes roles' using errcode = '42501';
  end if;
  if char_length(coalesce(trim(change_reason), '')) = 0 then
    raise exception 'a role change needs a reason' using errcode = 'AG400';
  end if;
  select u.role into previous from app.users u where u.id = target_user_id for update;
  if not found then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  if previous = new_role then
    -- Nothing changes, so nothing is recorded; the answer still describes the request.
    return row(null, target_user_id, previous, new_role, caller, change_reason, now())::app.role_changes;
  end if;
  perform set_config('agora.role_change_reason', change_reason, true);
  update app.users set role = new_role where id = target_user_id;
  perform set_config('agora.role_change_reason', '', true);
  select * into strict change from app.role_changes rc
  where rc.user_id = target_user_id and rc.changed_by = caller
  order by rc.id desc limit 1;
  return change;
end;
$$;

--
-- Name: FUNCTION change_user_role(target_user_id uuid, new_role app.user_role, change_reason text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text) IS 'An ADMIN changes another user''s role: recorded with its reason (and, through the trigger, its security event) in the same transaction, or refused with nothing changed. Serialized with other role changes; the caller''s own row stays share-locked until commit.';

--
-- Name: status_changes; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.status_changes (
    id bigint NOT NULL,
    user_id uuid NOT NULL,
    previous_status app.user_status NOT NULL,
    new_status app.user_status NOT NULL,
    changed_by uuid,
    reason text NOT NULL,
    sessions_revoked integer DEFAULT 0 NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT status_changes_reason_check CHECK (((char_length(reason) >= 1) AND (char_length(reason) <= 500))),
    CONSTRAINT status_changes_sessions_revoked_check CHECK ((sessions_revoked >= 0))
);

--
-- Name: TABLE status_changes; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.status_changes IS 'The history of suspensions and reactivations (who, why, before and after, how many sessions ended), written only by app.change_user_status in the same transaction as the change.';

--
-- Name: change_user_status(uuid, app.user_status, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.change_user_status(target_user_id uuid, new_status app.user_status, change_reason text) RETURNS app.status_changes
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  caller uuid := app_private.lock_admin_caller();
  previous app.user_status;
  target_role app.user_role;
  revoked integer := 0;
  change app.status_changes;
begin
  if char_length(coalesce(trim(change_reason), '')) = 0 then
    raise exception 'a status change needs a reason' using errcode = 'AG400';
  end if;
  select u.status, u.role into previous, target_role from app.users u where u.id = target_user_id for update;
  if not found then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  if target_user_id = caller then
    raise exception 'an ADMIN cannot change their own status' using errcode = 'AG422';
  end if;
  if previous = new_status then
    -- Nothing changes, so nothing is recorded; the answer still describes the request.
    return row(null, target_user_id, previous, new_status, caller, change_reason, 0, now())::app.status_changes;
  end if;
  -- The guard trigger refuses suspending the last active ADMIN.
  update app.users set status = new_status where id = target_user_id;
  if new_status = 'suspended' then
    revoked := app_private.revoke_sessions(target_user_id, 'suspended');
  end if;
  insert into app.status_changes (user_id, previous_status, new_status, changed_by, reason, sessions_revoked)
  values (target_user_id, previous, new_status, caller, change_reason, revoked)
  returning * into change;
  perform app_private.record_security_event(
    case when new_status = 'suspended' then 'admin.user_suspended' else 'admin.user_reactivated' end,
    case when new_status = 'suspended' and target_role = 'ADMIN' then 'critical'
         when new_status = 'suspended' then 'warning' else 'info' end::app.security_severity,
    target_user_id,
    jsonb_build_object('by', caller, 'from', previous, 'to', new_status, 'reason', change_reason,
                       'sessionsRevoked', revoked)
  );
  return change;
end;
$$;

--
-- Name: FUNCTION change_user_status(target_user_id uuid, new_status app.user_status, change_reason text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.change_user_status(target_user_id uuid, new_status app.user_status, change_reason text) IS 'An ADMIN suspends or reactivates another user, with a reason: a suspension ends every session of the user at once; the change, its history row (app.status_changes) and its security event commit together. Serialized with role changes; the caller''s row stays share-locked until commit. security definer: it ends another user''s sessions and writes the history and the event, which no API role may do directly; every rule is checked here.';

--
-- Name: claim_idempotency_key(text, text, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
begin
  delete from app_private.idempotency_keys k
  where k.user_id = me and k.key = idempotency_key and k.created_at < now() - interval '24 hours';
  insert into app_private.idempotency_keys (user_id, key, scope, request_hash)
  values (me, idempotency_key, key_scope, body_hash)
  on conflict (user_id, key) do nothing;
  if found then
    return null;
  end if;
  -- The key exists (the insert waited for its first transaction): its answer, which says
  -- {response: null} while that first request has not stored one.
  return coalesce(app_private.idempotent_answer(me, idempotency_key, key_scope, body_hash),
                  '{"response": null}'::jsonb);
end;
$$;

--
-- Name: FUNCTION claim_idempotency_key(idempotency_key text, key_scope text, body_hash text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text) IS 'Claims a key inside the caller''s transaction: null when it is new; when it exists, waits for its first transaction (the primary key) and returns {response} or {conflict: true} for another scope or body. security definer: the keys live in app_private; it acts only on the caller''s own keys.';

--
-- Name: config_int(text, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.config_int(section text, key text) RETURNS integer
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  v jsonb;
begin
  select c.config -> section -> key into v from app.config_versions c order by c.version desc limit 1;
  v := coalesce(v, app_private.config_defaults() -> section -> key);
  if jsonb_typeof(v) = 'number' then
    return v::text::integer;
  end if;
  raise exception 'configuration setting %.% is not a number', section, key using errcode = 'AG500';
end;
$$;

--
-- Name: FUNCTION config_int(section text, key text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.config_int(section text, key text) IS 'A numeric setting of the current configuration (limits and the like, never secrets), with its default from app_private.config_defaults. security definer: the configuration table is readable by ADMINs only; it returns one number.';

--
-- Name: conversation_profiles(uuid[]); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.conversation_profiles(conversation_ids uuid[]) RETURNS TABLE(conversation_id uuid, user_id uuid, name text, image text, role app.user_role)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select p.conversation_id, u.id, u.name, u.image, u.role
  from app.conversation_participants p
  join app.users u on u.id = p.user_id
  where p.conversation_id = any(conversation_ids)
    and p.conversation_id in (select app.my_conversation_ids())
  order by p.conversation_id, p.joined_at, u.id
$$;

--
-- Name: FUNCTION conversation_profiles(conversation_ids uuid[]); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.conversation_profiles(conversation_ids uuid[]) IS 'Display profiles (name, image, role; never e-mail) of the people who share a conversation with the caller. security definer: app.users shows a user only their own row.';

--
-- Name: create_checkout(jsonb, jsonb, text, text, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.create_checkout(requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  me uuid := auth.uid();
  claim jsonb;
  store_currency text := app_private.store_currency();
  refused jsonb;
  short jsonb;
  wanted_ids uuid[];
  wanted_quantities integer[];
  wanted_prices bigint[];
  new_checkout_id uuid;
  checkout_total bigint;
  created app.orders;
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    raise exception 'ordering needs the SUBSCRIBER role' using errcode = 'AG403';
  end if;
  if jsonb_typeof(requested_items) <> 'array' or jsonb_array_length(requested_items) = 0 then
    raise exception 'a checkout needs items' using errcode = 'AG400';
  end if;

  if idempotency_key is not null then
    claim := app.claim_idempotency_key(idempotency_key, 'create_checkout', request_hash);
    if claim ? 'conflict' then
      raise exception 'this Idempotency-Key was used with another request' using errcode = 'AG409';
    end if;
    if jsonb_typeof(claim -> 'response') = 'object' then
      return jsonb_build_object('replay', claim -> 'response');
    end if;
    if claim is not null then
      -- The key's first request committed its checkout but never stored an answer.
      select jsonb_build_object('resume', c.id, 'total', c.total, 'currency', c.currency) into claim
      from app.checkouts c
      where c.buyer_id = me and c.idempotency_key = create_checkout.idempotency_key;
      if claim is not null then
        return claim;
      end if;
      raise exception 'a request with this Idempotency-Key is still running' using errcode = 'AG409';
    end if;
  end if;

  -- The wanted quantities, one per product (a product named twice is summed).
  select array_agg(x.product_id order by x.product_id), array_agg(x.quantity order by x.product_id)
  into wanted_ids, wanted_quantities
  from (
    select (e ->> 'productId')::uuid as product_id, sum((e ->> 'quantity')::integer)::integer as quantity
    from jsonb_array_elements(requested_items) e
    group by 1
  ) x;
  if exists (select 1 from unnest(wanted_quantities) q where q < 1 or q > 1000) then
    raise exception 'a quantity is from 1 to 1000' using errcode = 'AG400';
  end if;

  -- First without locks: the refusals answer before anything is written.
  select jsonb_agg(jsonb_build_object('productId', w.product_id, 'reason',
           case when p.id is null then 'not_found'
                when v.status <> 'approved' then 'vendor_not_selling'
                when p.status <> 'active' then 'not_active'
                else 'wrong_currency' end) order by w.product_id)
  into refused
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  left join app.products p on p.id = w.product_id
  left join app.vendors v on v.id = p.vendor_id
  where p.id is null or p.status <> 'active' or v.status <> 'approved' or p.currency <> store_currency;
  if refused is not null then
    raise exception 'only active products of approved vendors can be ordered' using errcode = 'AG422',
      detail = jsonb_build_object('items', refused)::text;
  end if;

  select jsonb_agg(jsonb_build_object('productId', w.product_id, 'requested', w.quantity,
                                      'available', p.stock - p.reserved) order by w.product_id)
  into short
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  join app.products p on p.id = w.product_id
  where p.stock - p.reserved < w.quantity;
  if short is not null then
    raise exception 'not enough stock for % of the items', jsonb_array_length(short)
      using errcode = 'AG422', hint = 'insufficient_stock', detail = jsonb_build_object('items', short)::text;
  end if;

  -- The server's prices, in the order of wanted_ids (checked again under the locks below).
  select array_agg(p.price_amount order by w.product_id), sum(p.price_amount * w.quantity)
  into wanted_prices, checkout_total
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  join app.products p on p.id = w.product_id;

  insert into app.checkouts (buyer_id, total, currency, provider, idempotency_key, reserved_until)
  values (me, checkout_total, store_currency, payment_provider, create_checkout.idempotency_key,
          now() + make_interval(mins => app.config_int('store', 'reservationMinutes')))
  returning id into new_checkout_id;

  insert into app.orders (checkout_id, buyer_id, vendor_id, vendor_name, total, currency, shipping_address)
  select new_checkout_id, me, v.id, v.name, sum(w.price * w.quantity), store_currency, shipping_address
  from unnest(wanted_ids, wanted_quantities, wanted_prices) as w (product_id, quantity, price)
  join app.products p on p.id = w.product_id
  join app.vendors v on v.id = p.vendor_id
  group by v.id, v.name;

  insert into app.order_items (order_id, product_id, title, unit_price, quantity, total)
  select o.id, p.id, p.title, w.price, w.quantity, w.price * w.quantity
  from unnest(wanted_ids, wanted_quantities, wanted_prices) as w (product_id, quantity, price)
  join app.products p on p.id = w.product_id
  join app.orders o on o.checkout_id = new_checkout_id and o.vendor_id = p.vendor_id;

  insert into app.order_history (order_id, from_status, to_status, actor, actor_id, reason)
  select o.id, null, 'pending_payment', 'buyer', me, 'checkout'
  from app.orders o where o.checkout_id = new_checkout_id;

  for created in select * from app.orders o where o.checkout_id = new_checkout_id order by o.id loop
    perform app_private.emit_order_event(created, 'order.created');
  end loop;

  -- Last, the row locks, so they are held only until the commit that follows: in one fixed order
  -- (product id), so concurrent checkouts queue and never deadlock; NO KEY UPDATE, which the
  -- order items' foreign-key locks (KEY SHARE) of other checkouts do not block. A rollback
  -- (refused below) takes the rows and events above with it.
  perform 1 from app.products p where p.id = any(wanted_ids) order by p.id for no key update of p;

  if exists (
    select 1 from unnest(wanted_ids, wanted_prices) as w (product_id, price)
    join app.products p on p.id = w.product_id
    join app.vendors v on v.id = p.vendor_id
    where p.price_amount <> w.price or p.status <> 'active' or v.status <> 'approved'
       or p.currency <> store_currency
  ) then
    raise exception 'a product changed during the checkout; try again' using errcode = 'AG409';
  end if;

  select jsonb_agg(jsonb_build_object('productId', w.product_id, 'requested', w.quantity,
                                      'available', p.stock - p.reserved) order by w.product_id)
  into short
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  join app.products p on p.id = w.product_id
  where p.stock - p.reserved < w.quantity;
  if short is not null then
    raise exception 'not enough stock for % of the items', jsonb_array_length(short)
      using errcode = 'AG422', hint = 'insufficient_stock', detail = jsonb_build_object('items', short)::text;
  end if;

  update app.products p set reserved = p.reserved + w.quantity
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  where p.id = w.product_id;

  return jsonb_build_object('created', new_checkout_id, 'total', checkout_total, 'currency', store_currency);
end;
$$;

--
-- Name: FUNCTION create_checkout(requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.create_checkout(requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) IS 'The checkout in one transaction: idempotency key (replay, resume or AG409), only active products of approved vendors in the store''s currency (AG422 with the refused items), enough available stock (AG422 insufficient_stock with the items short), the checkout, one order per vendor with items at the server''s prices, history and order.created events, and last the products row-locked in id order (held only until the commit), the rules and the stock checked again under the locks (AG409 if a price or status changed meanwhile) and the reservation (store.reservationMinutes). security definer: buyers cannot write products or orders; every rule is checked here, with no read-modify-write outside the database.';

--
-- Name: create_conversation(app.conversation_type, uuid[], text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text DEFAULT NULL::text) RETURNS TABLE(conversation_id uuid, created boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  others uuid[];
  max_participants integer := app.config_int('limits', 'groupMaxParticipants');
  key text;
  new_id uuid;
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    raise exception 'messaging needs the SUBSCRIBER role' using errcode = 'AG403';
  end if;
  select coalesce(array_agg(distinct p), '{}') into others from unnest(participant_ids) as p where p <> me;
  if (select count(*) from app.users u where u.id = any(others) and u.status = 'active' and u.role >= 'SUBSCRIBER')
     <> cardinality(others) then
    raise exception 'every participant must be an active user who can message' using errcode = 'AG422';
  end if;
  if conversation_type = 'direct' then
    if cardinality(others) <> 1 then
      raise exception 'a direct conversation has exactly two people' using errcode = 'AG400';
    end if;
    if conversation_title is not null then
      raise exception 'a direct conversation has no title' using errcode = 'AG400';
    end if;
    key := least(me, others[1])::text || ':' || greatest(me, others[1])::text;
    insert into app.conversations (type, created_by, direct_key)
    values ('direct', me, key)
    on conflict (direct_key) do nothing
    returning id into new_id;
    if new_id is null then
      return query select c.id, false from app.conversations c where c.direct_key = key;
      return;
    end if;
  else
    if conversation_title is null or char_length(trim(conversation_title)) = 0 then
      raise exception 'a group conversation needs a title' using errcode = 'AG400';
    end if;
    if cardinality(others) + 1 > max_participants then
      raise exception 'a group has at most % participants', max_participants using errcode = 'AG422';
    end if;
    insert into app.conversations (type, title, created_by)
    values ('group', trim(conversation_title), me)
    returning id into new_id;
  end if;
  insert into app.conversation_participants (conversation_id, user_id, added_by)
  select new_id, p, me from unnest(array_prepend(me, others)) as p;
  return query select new_id, true;
end;
$$;

--
-- Name: FUNCTION create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text) IS 'Creates a conversation, or returns the existing direct one between the same two people (from either side; concurrent creations meet on the unique direct_key). Returns the id and whether it was created. security definer: it adds other people as participants, which no policy lets a user do; every rule is checked here.';

--
-- Name: create_notification(uuid, app.notification_type, text, text, jsonb, app.notification_priority); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb DEFAULT '{}'::jsonb, priority app.notification_priority DEFAULT 'normal'::app.notification_priority) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  target uuid := coalesce(target_user_id, auth.uid());
  written record;
begin
  if me is null then
    raise exception 'sign in to create notifications' using errcode = 'AG403';
  end if;
  if target <> me and not app.is_admin() then
    raise exception 'only an ADMIN notifies other users' using errcode = 'AG403';
  end if;
  if not exists (select 1 from app.users u where u.id = target) then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  select * into written
  from app_private.notify_many(array[target], notification_type, title, body, data, priority);
  return (select app.notification_json(n) || jsonb_build_object('userId', n.user_id, 'inbox', n.inbox)
          from app.notifications n where n.id = written.notification_id);
end;
$$;

--
-- Name: FUNCTION create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority) IS 'POST /api/notifications: a notification for oneself (target null or one''s own id), or, for an ADMIN, for anyone (AG403 otherwise; AG404 for an unknown user), through app_private.notify_many and its rules. Returns the notification with userId and inbox (false: the recipient''s preferences keep it out of their inbox). security definer: it writes through the one way in, which API roles cannot call; the caller is checked here.';

--
-- Name: create_notification_batch(jsonb, jsonb, text[], text, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.create_notification_batch(audience jsonb, notification jsonb, channels text[] DEFAULT ARRAY['inApp'::text, 'push'::text], idempotency_key text DEFAULT NULL::text, request_hash text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
#variable_conflict use_variable
declare
  me uuid := auth.uid();
  b app.notification_batches;
  recipient_count integer;
  max_recipients integer := app.config_int('notifications', 'bulkMaxRecipients');
  kind app.notification_type;
  urgency app.notification_priority;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN sends bulk notifications' using errcode = 'AG403';
  end if;
  if jsonb_typeof(audience) <> 'object'
     or not (audience ? 'userIds' or audience ? 'roles' or coalesce((audience ->> 'all')::boolean, false)) then
    raise exception 'an audience names userIds, roles or all' using errcode = 'AG400';
  end if;
  kind := (notification ->> 'type')::app.notification_type;
  urgency := coalesce(notification ->> 'priority', 'normal')::app.notification_priority;
  if char_length(coalesce(notification ->> 'title', '')) not between 1 and 200
     or char_length(coalesce(notification ->> 'body', '')) > 2000
     or jsonb_typeof(coalesce(notification -> 'data', '{}')) <> 'object'
     or octet_length(coalesce(notification -> 'data', '{}')::text) > 2048 then
    raise exception 'a notification has a title of 1 to 200 characters, a body of at most 2000 and data of at most 2048 bytes'
      using errcode = 'AG400';
  end if;
  if idempotency_key is not null then
    select * into b from app.notification_batches x
    where x.created_by = me and x.idempotency_key = idempotency_key;
    if found then
      if b.request_hash is distinct from request_hash then
        raise exception 'this Idempotency-Key was used with another request' using errcode = 'AG409';
      end if;
      return jsonb_build_object('id', b.id, 'status', b.status, 'recipients', b.recipients, 'replayed', true);
    end if;
  end if;
  select count(*)::integer into recipient_count from app.users u where app_private.in_audience(u, audience);
  if recipient_count > max_recipients then
    raise exception 'this audience has % recipients; a batch has at most %', recipient_count, max_recipients
      using errcode = 'AG422';
  end if;
  insert into app.notification_batches as x
    (created_by, idempotency_key, request_hash, audience, type, title, body, data, priority, channels, recipients)
  values (
    me, idempotency_key, request_hash, audience, kind, notification ->> 'title',
    coalesce(notification ->> 'body', ''), coalesce(notification -> 'data', '{}'), urgency,
    array(select distinct c from unnest(channels) c order by c), recipient_count
  )
  on conflict on constraint notification_batches_idempotency_key do nothing
  returning * into b;
  if b.id is null then
    -- The same key at the same time: the first request's batch, once it committed.
    select * into b from app.notification_batches x
    where x.created_by = me and x.idempotency_key = idempotency_key;
    if b.request_hash is distinct from request_hash then
      raise exception 'this Idempotency-Key was used with another request' using errcode = 'AG409';
    end if;
    return jsonb_build_object('id', b.id, 'status', b.status, 'recipients', b.recipients, 'replayed', true);
  end if;
  perform app_private.enqueue_job('notifications.batch', jsonb_build_object('batchId', b.id), now(),
    'notifications.batch:' || b.id::text);
  return jsonb_build_object('id', b.id, 'status', b.status, 'recipients', b.recipients, 'replayed', false);
end;
$$;

--
-- Name: FUNCTION create_notification_batch(audience jsonb, notification jsonb, channels text[], idempotency_key text, request_hash text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.create_notification_batch(audience jsonb, notification jsonb, channels text[], idempotency_key text, request_hash text) IS 'POST /api/notifications/bulk: accepts a batch (ADMIN only, AG403 otherwise) for an audience ({ userIds?, roles?, all? }: active users only) and queues its notifications.batch job; returns { id, status, recipients, replayed }. The same Idempotency-Key with the same request returns the same batch (replayed), with another request AG409. AG422 over notifications.bulkMaxRecipients. security definer: batches and the job queue are written by the server only; the caller is checked here.';

--
-- Name: current_user_role(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.current_user_role() RETURNS app.user_role
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return coalesce(
    (select u.role from app.users u where u.id = (select auth.uid()) and u.status = 'active'),
    'VISITOR'::app.user_role
  );
end;
$$;

--
-- Name: FUNCTION current_user_role(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.current_user_role() IS 'The signed-in user''s current role from the database; VISITOR without an active session user.';

--
-- Name: delete_account(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.delete_account() RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  me uuid := (select auth.uid());
  victim app.users;
  step record;
  wallets text[];
begin
  if me is null then
    raise exception 'sign in to delete your account' using errcode = '42501';
  end if;
  if not app.has_fresh_sign_in() then
    raise exception 'deleting the account needs a fresh sign-in' using errcode = 'AG403',
      hint = 'reauthentication_required';
  end if;
  select * into victim from app.users u where u.id = me for update;
  if not found then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  select coalesce(array_agg(lower(i.provider_user_id)), '{}') into wallets
  from app.identities i where i.user_id = me and i.provider = 'wallet';
  for step in select s.function_name from app_private.account_erasure_steps s order by s.position loop
    execute format('select %s($1)', step.function_name::regproc) using me;
  end loop;
  -- Sign-in state that names the person but has no key to the user row.
  if victim.email is not null then
    delete from app_private.magic_links l where lower(l.email) = lower(victim.email);
    delete from app_private.rate_limits r where r.bucket = 'signin:email:' || lower(victim.email);
  end if;
  delete from app_private.rate_limits r
  where r.bucket = any (select 'signin:wallet:' || w from unnest(wallets) w);
  update app.access_logs l set user_id = null where l.user_id = me;
  -- Log lines still on their way from the API instances (written in batches) are nulled later.
  perform app_private.enqueue_job('account.erase_access_logs', jsonb_build_object('userId', me),
    now() + interval '2 minutes', 'account.erase_access_logs:' || me::text);
  -- The row: identities, sessions (and their refresh tokens), memberships, files, histories and
  -- every other domain's rows cascade; what others keep (messages, security events, orders)
  -- sets the person to null. The guard trigger refuses the last active ADMIN.
  delete from app.users u where u.id = me;
  delete from app.events e where e.topic = 'user:' || me::text;
  perform app_private.record_security_event('account.deleted', 'warning', null,
    jsonb_build_object('userId', me, 'role', victim.role));
  return now();
end;
$_$;

--
-- Name: FUNCTION delete_account(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.delete_account() IS 'The caller deletes their own account: needs a fresh sign-in (AG403 reauthentication_required), never the last active ADMIN (AG422). Runs the erasure steps (app_private.account_erasure_steps), removes sign-in state naming the person and its id from the access log (and queues account.erase_access_logs for log lines still being written), then the user row (every foreign key cascades or sets null), the user topic''s events, and records account.deleted. Every session ends with its row. security definer: it deletes the caller''s row and rows across domains that no API role may delete; it only ever touches the caller''s.';

--
-- Name: delete_message(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.delete_message(target_message_id uuid) RETURNS TABLE(conversation_id uuid, deleted_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  m app.messages;
  conv app.conversations;
  is_participant boolean;
begin
  select * into m from app.messages where id = target_message_id for update;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  select * into conv from app.conversations c where c.id = m.conversation_id;
  is_participant := exists (
    select 1 from app.conversation_participants p where p.conversation_id = m.conversation_id and p.user_id = me
  );
  if not is_participant and not app.is_admin() then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  if not (
    (is_participant and m.sender_id = me and app.has_role('SUBSCRIBER'))
    or (is_participant and conv.type = 'group' and conv.created_by = me and app.has_role('SUBSCRIBER'))
    or app.is_admin()
  ) then
    raise exception 'only the author, the group''s creator or an ADMIN deletes a message' using errcode = 'AG403';
  end if;
  if m.deleted_at is not null then
    return query select m.conversation_id, m.deleted_at;
    return;
  end if;
  delete from app.attachments a where a.message_id = m.id;
  update app.messages set deleted_at = now() where id = m.id returning * into m;
  return query select m.conversation_id, m.deleted_at;
end;
$$;

--
-- Name: FUNCTION delete_message(target_message_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.delete_message(target_message_id uuid) IS 'Soft-deletes a message into a tombstone: by its author, the group''s creator, or an ADMIN. The content and the attachments go (the attachments'' delete trigger queues their files'' removal as storage.delete jobs). security definer: the creator and ADMINs act on messages that are not theirs, ADMINs even in conversations they cannot read; each case is checked here.';

--
-- Name: delete_notification(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.delete_notification(target_notification_id uuid) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  gone uuid;
begin
  delete from app.notifications n
  where n.id = target_notification_id and n.user_id = auth.uid() and n.inbox
  returning n.id into gone;
  if gone is null then
    raise exception 'notification not found' using errcode = 'AG404';
  end if;
  return jsonb_build_object('id', gone, 'deleted', true);
end;
$$;

--
-- Name: FUNCTION delete_notification(target_notification_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.delete_notification(target_notification_id uuid) IS 'DELETE /api/notifications/:id: deletes one of the caller''s own inbox notifications; anything else (another user''s, a hidden one, none) is AG404. security definer because no API role holds a table-wide delete; the ownership check is the where clause.';

--
-- Name: edit_message(uuid, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.edit_message(target_message_id uuid, new_content text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  m app.messages;
  window_minutes integer := app.config_int('limits', 'messageEditWindowMinutes');
  max_length integer := app.config_int('limits', 'messageMaxLength');
begin
  -- No FOR UPDATE here: under RLS it would hide the row from non-authors, who must get 403.
  select * into m from app.messages where id = target_message_id;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  if m.sender_id is distinct from auth.uid() then
    raise exception 'only the author edits a message' using errcode = 'AG403';
  end if;
  if m.deleted_at is not null then
    raise exception 'a deleted message cannot be edited' using errcode = 'AG422';
  end if;
  if m.created_at < now() - make_interval(mins => window_minutes) then
    raise exception 'the edit window (% minutes) has closed', window_minutes using errcode = 'AG422';
  end if;
  if char_length(new_content) > max_length then
    raise exception 'a message has at most % characters', max_length using errcode = 'AG400';
  end if;
  -- The update re-checks everything under the row lock (RLS: author, not deleted).
  update app.messages set content = new_content where id = m.id and deleted_at is null returning * into m;
  if not found then
    raise exception 'a deleted message cannot be edited' using errcode = 'AG422';
  end if;
  return app.message_json(m);
end;
$$;

--
-- Name: FUNCTION edit_message(target_message_id uuid, new_content text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.edit_message(target_message_id uuid, new_content text) IS 'Edits a message: the author only (AG403 otherwise), within the configured edit window and length (the same limit as sends), never a tombstone. Returns the message JSON. security invoker: RLS decides.';

--
-- Name: effective_config(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.effective_config() RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if current_setting('role', true) in ('anon', 'authenticated') and not app.is_admin() then
    raise exception 'only an ADMIN reads the configuration' using errcode = '42501';
  end if;
  return app_private.jsonb_merge_deep(
    app_private.config_defaults(),
    coalesce((select c.config from app.config_versions c order by c.version desc limit 1), '{}'::jsonb)
  );
end;
$$;

--
-- Name: FUNCTION effective_config(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.effective_config() IS 'The current configuration with every default filled in: what the API reads. security definer because app.config_versions is readable by admins only, so an API role gets it only as an ADMIN; the server''s own connection (no API role) always may. The public part is app.public_config.';

--
-- Name: export_account(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.export_account() RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := (select auth.uid());
  document jsonb;
begin
  if me is null or not exists (select 1 from app.users u where u.id = me and u.status = 'active') then
    raise exception 'sign in to export your account' using errcode = '42501';
  end if;
  document := app_private.account_export(me);
  perform app_private.record_security_event('account.exported', 'info', me,
    jsonb_build_object('parts', (select jsonb_agg(k order by k) from jsonb_object_keys(document) k)));
  return document;
end;
$$;

--
-- Name: FUNCTION export_account(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.export_account() IS 'The caller''s data as one JSON document (app_private.account_export), recorded as account.exported. security definer: it reads the caller''s own rows across domains, messages in conversations they left included, which RLS would hide; it only ever reads the caller''s.';

--
-- Name: get_product(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.get_product(target_product_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  result jsonb;
begin
  select app.product_json(p, v) into result
  from app.products p join app.vendors v on v.id = p.vendor_id
  where p.id = target_product_id
    and ((p.status = 'active' and v.status = 'approved')
         or p.vendor_id in (select app.my_vendor_ids())
         or app.is_admin());
  return result;
end;
$$;

--
-- Name: FUNCTION get_product(target_product_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.get_product(target_product_id uuid) IS 'A product as the API shows it, or null when the caller may not see it: catalog products (active, of an approved vendor) for anyone, drafts and archived products for their vendor''s owner and ADMINs. security definer: visitors hold no privilege on app tables; the visibility rule is explicit here.';

--
-- Name: has_fresh_sign_in(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.has_fresh_sign_in() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  session_claim text := auth.jwt() ->> 'session_id';
begin
  if (select auth.uid()) is null or session_claim is null
     or session_claim !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    return false;
  end if;
  return exists (
    select 1 from app.sessions s
    where s.id = session_claim::uuid and s.user_id = (select auth.uid())
      and s.revoked_at is null and s.expires_at > now()
      and s.authenticated_at > now() - make_interval(secs => app.config_int('security', 'freshSignInSeconds'))
  );
end;
$_$;

--
-- Name: FUNCTION has_fresh_sign_in(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.has_fresh_sign_in() IS 'Whether the caller''s session (the session_id claim) is live and was opened by a sign-in within security.freshSignInSeconds: what deleting the account and exporting a wallet key need. The API checks the same first (functions/api/core/middleware/freshness.ts); this is the database''s own check. security definer: it reads the caller''s session row and the configuration.';

--
-- Name: has_role(app.user_role); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.has_role(required app.user_role) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- plpgsql, not sql: policies call this several times per statement, and a non-inlinable SQL
  -- function is parsed and planned again on every call while plpgsql keeps its plan for the
  -- session. `(select auth.uid())` is evaluated once per statement; bare, it parsed the claims
  -- JSON once per row whenever the plan scanned (44 us a call with 41 users, 10 us now).
  return exists (
    select 1 from app.users u
    where u.id = (select auth.uid()) and u.status = 'active' and u.role >= required
  );
end;
$$;

--
-- Name: FUNCTION has_role(required app.user_role); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.has_role(required app.user_role) IS 'Whether the signed-in user is active and holds at least the given role, read from app.users (not from a possibly stale token). security definer because policies on app.users call it: invoker rights would recurse into those policies. It reads one row and returns a boolean.';

--
-- Name: is_admin(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.is_admin() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return app.has_role('ADMIN');
end;
$$;

--
-- Name: FUNCTION is_admin(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.is_admin() IS 'Shorthand for app.has_role(''ADMIN''), used by every admin policy; plpgsql so its plan is kept.';

--
-- Name: is_participant(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.is_participant(target_conversation_id uuid) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return exists (
    select 1 from app.conversation_participants p
    where p.conversation_id = target_conversation_id and p.user_id = (select auth.uid())
  ) and app.has_role('SUBSCRIBER');
end;
$$;

--
-- Name: FUNCTION is_participant(target_conversation_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.is_participant(target_conversation_id uuid) IS 'Whether the current user takes part in one conversation (and may use it): one primary-key lookup, cheaper than the whole set for single-conversation checks. security definer as app.my_conversation_ids.';

--
-- Name: list_people(text, text, uuid, integer); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.list_people(search text DEFAULT NULL::text, after_name text DEFAULT NULL::text, after_id uuid DEFAULT NULL::uuid, max_rows integer DEFAULT 50) RETURNS TABLE(id uuid, name text, image text, role app.user_role)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  caller uuid := (select auth.uid());
  pattern text;
begin
  if not app.has_role('SUBSCRIBER') then
    raise exception 'the people directory needs the SUBSCRIBER role' using errcode = '42501';
  end if;
  if nullif(search, '') is not null then
    pattern := '%' || replace(replace(replace(lower(search), '\', '\\'), '%', '\%'), '_', '\_') || '%';
  end if;
  return query
    select u.id, u.name, u.image, u.role
    from app.users u
    where u.status = 'active'
      and u.id <> caller
      and (pattern is null or lower(u.name) like pattern)
      and (after_id is null or (lower(u.name), u.id) > (lower(coalesce(after_name, '')), after_id))
    order by lower(u.name), u.id
    limit least(greatest(coalesce(max_rows, 50), 1), 201);
end;
$$;

--
-- Name: FUNCTION list_people(search text, after_name text, after_id uuid, max_rows integer); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.list_people(search text, after_name text, after_id uuid, max_rows integer) IS 'The people directory: id, name, image and role of active users other than the caller, for SUBSCRIBER and above, searched by name, in keyset pages. security definer: app.users shows a user only their own row; this returns public fields only, never an e-mail.';

--
-- Name: list_vendors(text, text, uuid, integer); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.list_vendors(search text DEFAULT NULL::text, after_created_at text DEFAULT NULL::text, after_id uuid DEFAULT NULL::uuid, page_size integer DEFAULT 50) RETURNS TABLE(vendor jsonb, sort_key text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  pattern text := case when search is null or search = '' then null
    else '%' || replace(replace(replace(lower(search), '\', '\\'), '%', '\%'), '_', '\_') || '%' end;
begin
  return query
    select app.vendor_json(v, false), v.created_at::text
    from app.vendors v
    where v.status = 'approved'
      and (pattern is null or lower(v.name) like pattern)
      and (after_id is null or (v.created_at, v.id) < (after_created_at::timestamptz, after_id))
    order by v.created_at desc, v.id desc
    limit least(greatest(page_size, 1), 201);
end;
$$;

--
-- Name: FUNCTION list_vendors(search text, after_created_at text, after_id uuid, page_size integer); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.list_vendors(search text, after_created_at text, after_id uuid, page_size integer) IS 'The public vendor list: approved vendors only, public fields only, newest first, keyset-paged by (created_at, id) (sort_key is created_at with its microseconds, for the cursor); search is a case-insensitive substring of the name. security definer: visitors hold no privilege on app tables; this returns only what anyone may see.';

--
-- Name: mark_read(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.mark_read(target_message_id uuid) RETURNS TABLE(conversation_id uuid, last_read_message_id uuid, unread_count bigint)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  m app.messages;
  p app.conversation_participants;
begin
  select * into m from app.messages where id = target_message_id;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  update app.conversation_participants cp
  set last_read_seq = m.seq, last_read_message_id = m.id, last_read_at = now()
  where cp.conversation_id = m.conversation_id and cp.user_id = me
  returning * into p;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  return query select p.conversation_id, p.last_read_message_id, (
    select count(*) from app.messages x
    where x.conversation_id = p.conversation_id and x.seq > p.last_read_seq
      and x.deleted_at is null and x.sender_id is distinct from me
  );
end;
$$;

--
-- Name: FUNCTION mark_read(target_message_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.mark_read(target_message_id uuid) IS 'Moves the caller''s read watermark forward to a message (never backward; the guard trigger keeps the later mark) and returns it with the unread count. security invoker: RLS decides which message and row the caller reaches.';

--
-- Name: messages; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.messages (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    conversation_id uuid NOT NULL,
    seq bigint NOT NULL,
    sender_id uuid,
    content text NOT NULL,
    reply_to_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    edited_at timestamp with time zone,
    deleted_at timestamp with time zone,
    CONSTRAINT messages_content_length CHECK ((((deleted_at IS NULL) AND ((char_length(content) >= 1) AND (char_length(content) <= 10000))) OR ((deleted_at IS NOT NULL) AND (content = ''::text))))
);

--
-- Name: TABLE messages; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.messages IS 'Messages in per-conversation commit order (seq). A deleted message is a tombstone: content empty, attachments gone, place kept. The check''s 10000 is the hard ceiling; limits.messageMaxLength may be lower.';

--
-- Name: message_json(app.messages); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.message_json(m app.messages) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select app.message_object(m, (
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id)
    from app.attachments a where a.message_id = m.id
  ))
$$;

--
-- Name: FUNCTION message_json(m app.messages); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.message_json(m app.messages) IS 'The message as the API shows it, attachments read here. For list queries, where it is planned once per query. security invoker: a user sees only the attachments RLS shows them.';

--
-- Name: message_object(app.messages, jsonb); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.message_object(m app.messages, attachments jsonb) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'id', m.id,
    'conversationId', m.conversation_id,
    'seq', m.seq,
    'senderId', m.sender_id,
    'content', m.content,
    'replyToId', m.reply_to_id,
    'attachments', case when m.deleted_at is null then coalesce(attachments, '[]'::jsonb) else '[]'::jsonb end,
    'createdAt', to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'editedAt', to_char(m.edited_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'deletedAt', to_char(m.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  )
$$;

--
-- Name: FUNCTION message_object(m app.messages, attachments jsonb); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.message_object(m app.messages, attachments jsonb) IS 'The message object from its row and its attachments'' JSON. Inlinable pure SQL with no pinned search_path on purpose (a pin stops inlining; it reads no table and runs with the caller''s rights): inlined it costs nothing per call in lists and is planned once per session inside plpgsql. The send and the event trigger each read the attachments in a statement of their own and call this.';

--
-- Name: my_conversation_ids(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.my_conversation_ids() RETURNS SETOF uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- plpgsql keeps its plan across calls (see app.has_role).
  if app.has_role('SUBSCRIBER') then
    return query
      select p.conversation_id from app.conversation_participants p where p.user_id = (select auth.uid());
  end if;
end;
$$;

--
-- Name: FUNCTION my_conversation_ids(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.my_conversation_ids() IS 'The conversations the current user takes part in and may use (an active user of at least SUBSCRIBER; a participant demoted to VISITOR or suspended sees nothing until reinstated). security definer so policies on the participants table can use it without recursing into their own policies; it returns only the caller''s memberships.';

--
-- Name: my_selling_vendor_ids(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.my_selling_vendor_ids() RETURNS SETOF uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if app.has_role('SUBSCRIBER') then
    return query select v.id from app.vendors v
      where v.owner_id = (select auth.uid()) and v.status = 'approved';
  end if;
end;
$$;

--
-- Name: FUNCTION my_selling_vendor_ids(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.my_selling_vendor_ids() IS 'The approved vendors the current user owns: who may create and edit products. security definer as app.my_vendor_ids.';

--
-- Name: my_vendor_ids(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.my_vendor_ids() RETURNS SETOF uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if app.has_role('SUBSCRIBER') then
    return query select v.id from app.vendors v where v.owner_id = (select auth.uid());
  end if;
end;
$$;

--
-- Name: FUNCTION my_vendor_ids(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.my_vendor_ids() IS 'The vendors the current user owns, whatever their status (an active user of at least SUBSCRIBER; a suspended or demoted owner owns nothing until reinstated). security definer so the store''s policies can use it without recursing into the vendors policies; it returns only the caller''s own vendors.';

--
-- Name: notification_analytics(timestamp with time zone, timestamp with time zone, text, app.notification_type); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text DEFAULT 'day'::text, only_type app.notification_type DEFAULT NULL::app.notification_type) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  result jsonb;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads platform analytics' using errcode = '42501';
  end if;
  if bucket not in ('hour', 'day', 'week', 'month') then
    raise exception 'unknown interval %', bucket using errcode = 'AG400';
  end if;
  if range_from >= range_to then
    raise exception 'from must be before to' using errcode = 'AG400';
  end if;
  with created as (
    select n.type, n.created_at, n.read_at
    from app.notifications n
    where n.created_at >= range_from and n.created_at < range_to and n.inbox
      and (only_type is null or n.type = only_type)
  ), finished as (
    select n.type, d.channel, d.status, d.finished_at
    from app_private.notification_deliveries d
    join app.notifications n on n.id = d.notification_id
    where d.finished_at >= range_from and d.finished_at < range_to
      and (only_type is null or n.type = only_type)
  ), created_by as (
    select c.type, date_trunc(bucket, c.created_at, 'UTC') as t,
           count(*) as created, count(*) filter (where c.read_at is not null) as read
    from created c group by 1, 2
  ), finished_by as (
    select f.type, date_trunc(bucket, f.finished_at, 'UTC') as t,
           count(*) filter (where f.channel = 'push' and f.status = 'sent') as push_sent,
           count(*) filter (where f.channel = 'push' and f.status in ('failed', 'pruned')) as push_failed,
           count(*) filter (where f.channel = 'email' and f.status = 'sent') as email_sent,
           count(*) filter (where f.channel = 'email' and f.status = 'failed') as email_failed
    from finished f group by 1, 2
  ), buckets as (
    select generate_series(date_trunc(bucket, range_from, 'UTC'), range_to, ('1 ' || bucket)::interval) as t
  ), kinds as (
    select k from unnest(enum_range(null::app.notification_type)) k
    where only_type is null or k = only_type
  ), totals as (
    select coalesce((select sum(created) from created_by), 0)::bigint as created,
           coalesce((select sum(read) from created_by), 0)::bigint as read,
           coalesce((select sum(push_sent) from finished_by), 0)::bigint as push_sent,
           coalesce((select sum(push_failed) from finished_by), 0)::bigint as push_failed,
           coalesce((select sum(email_sent) from finished_by), 0)::bigint as email_sent,
           coalesce((select sum(email_failed) from finished_by), 0)::bigint as email_failed,
           (select percentile_cont(0.5) within group (order by extract(epoch from c.read_at - c.created_at))
              from created c where c.read_at is not null) as median_read
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'created', t.created, 'read', t.read, 'pushSent', t.push_sent, 'pushDelivered', t.push_sent,
      'pushFailed', t.push_failed, 'emailSent', t.email_sent),
    'byType', (
      select jsonb_agg(jsonb_build_object(
        'type', k.k,
        'created', coalesce((select sum(c.created) from created_by c where c.type = k.k), 0),
        'read', coalesce((select sum(c.read) from created_by c where c.type = k.k), 0),
        'pushSent', coalesce((select sum(f.push_sent) from finished_by f where f.type = k.k), 0),
        'pushFailed', coalesce((select sum(f.push_failed) from finished_by f where f.type = k.k), 0)
      ) order by k.k)
      from kinds k
    ),
    'byChannel', jsonb_build_array(
      jsonb_build_object('channel', 'inApp', 'sent', t.created, 'failed', 0),
      jsonb_build_object('channel', 'push', 'sent', t.push_sent, 'failed', t.push_failed),
      jsonb_build_object('channel', 'email', 'sent', t.email_sent, 'failed', t.email_failed)
    ),
    'series', (
      select jsonb_agg(jsonb_build_object(
        't', to_char(b.t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
        'created', coalesce((select sum(c.created) from created_by c where c.t = b.t), 0),
        'read', coalesce((select sum(c.read) from created_by c where c.t = b.t), 0),
        'pushSent', coalesce((select sum(f.push_sent) from finished_by f where f.t = b.t), 0),
        'pushFailed', coalesce((select sum(f.push_failed) from finished_by f where f.t = b.t), 0)
      ) order by b.t)
      from buckets b
    ),
    'readRate', case when t.created = 0 then 0 else round(t.read::numeric / t.created, 4) end,
    'medianSecondsToRead', case when t.median_read is null then null else round(t.median_read::numeric, 3) end
  ) into result
  from totals t;
  return result;
end;
$$;

--
-- Name: FUNCTION notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text, only_type app.notification_type); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text, only_type app.notification_type) IS 'GET /api/notifications/analytics and the notifications section of /api/admin/analytics: from the data, in [range_from, range_to). created and read count inbox notifications created in the range (read: those of them read since, so readRate = read / created and the median time to read is theirs); push and e-mail count deliveries by the time of their outcome (pushFailed includes pruned tokens; pushDelivered equals pushSent: FCM''s HTTP v1 API reports acceptance, not receipt). byType, byChannel (inApp, push, email) and a zero-filled series per hour, day, week or month. ADMIN only (42501). security definer: ADMINs cannot read other users'' notifications or any delivery row; it returns counts only.';

--
-- Name: notification_batch_progress(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.notification_batch_progress(target_batch_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  b app.notification_batches;
  result jsonb;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads bulk sends' using errcode = 'AG403';
  end if;
  select * into b from app.notification_batches x where x.id = target_batch_id;
  if not found then
    raise exception 'batch not found' using errcode = 'AG404';
  end if;
  select jsonb_build_object(
    'id', b.id,
    'status', b.status,
    'recipients', b.recipients,
    'created', (select count(*) from app.notifications n where n.batch_id = b.id and n.inbox),
    'pushSent', count(*) filter (where d.channel = 'push' and d.status = 'sent'),
    'pushFailed', count(*) filter (where d.channel = 'push' and d.status in ('failed', 'pruned')),
    'emailSent', count(*) filter (where d.channel = 'email' and d.status = 'sent'),
    'createdAt', to_char(b.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'finishedAt', to_char(b.finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  ) into result
  from app.notifications n
  join app_private.notification_deliveries d on d.notification_id = n.id
  where n.batch_id = b.id;
  return result;
end;
$$;

--
-- Name: FUNCTION notification_batch_progress(target_batch_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.notification_batch_progress(target_batch_id uuid) IS 'GET /api/notifications/bulk/:id: a batch''s progress counted from the data (inbox rows written, pushes sent and failed, e-mails sent). ADMIN only (AG403); AG404 for an unknown batch. security definer: delivery rows are server-only.';

--
-- Name: notifications; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.notifications (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    type app.notification_type NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    data jsonb DEFAULT '{}'::jsonb NOT NULL,
    priority app.notification_priority DEFAULT 'normal'::app.notification_priority NOT NULL,
    collapse_key text,
    batch_id uuid,
    inbox boolean DEFAULT true NOT NULL,
    read_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT notifications_body_check CHECK ((char_length(body) <= 2000)),
    CONSTRAINT notifications_collapse_key_check CHECK (((char_length(collapse_key) >= 1) AND (char_length(collapse_key) <= 200))),
    CONSTRAINT notifications_data_check CHECK ((jsonb_typeof(data) = 'object'::text)),
    CONSTRAINT notifications_title_check CHECK (((char_length(title) >= 1) AND (char_length(title) <= 200)))
)
WITH (fillfactor='80');

--
-- Name: TABLE notifications; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.notifications IS 'Each user''s notifications. Rows with inbox = false exist only for delivery (the type''s in-app channel is off) and are never shown. At most one unread row per (user, collapse_key). Written only through app_private.notify_many; users read, mark read and delete their own.';

--
-- Name: notification_json(app.notifications); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.notification_json(n app.notifications) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'id', n.id,
    'type', n.type,
    'title', n.title,
    'body', n.body,
    'data', n.data,
    'priority', n.priority,
    'readAt', to_char(n.read_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'createdAt', to_char(n.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  )
$$;

--
-- Name: FUNCTION notification_json(n app.notifications); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.notification_json(n app.notifications) IS 'The notification as the API and the live events show it. Inlinable pure SQL with no pinned search_path on purpose, as app.message_object: it reads no table and runs with the caller''s rights.';

--
-- Name: notification_preferences_document(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.notification_preferences_document() RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  p app.notification_preferences;
begin
  if me is null then
    raise exception 'sign in to read preferences' using errcode = 'AG403';
  end if;
  select * into p from app.notification_preferences x where x.user_id = me;
  return jsonb_build_object(
    'types', (
      select jsonb_object_agg(t::text, jsonb_build_object(
        'inApp', app_private.wants(p.types, t, 'inApp', d.defaults),
        'push', app_private.wants(p.types, t, 'push', d.defaults),
        'email', app_private.wants(p.types, t, 'email', d.defaults)))
      from unnest(enum_range(null::app.notification_type)) t,
           lateral (select app_private.notification_type_defaults(t) as defaults) d
    ),
    'quietHours', case when p.quiet_start is null then null else jsonb_build_object(
      'start', to_char(p.quiet_start, 'HH24:MI'),
      'end', to_char(p.quiet_end, 'HH24:MI'),
      'timeZone', p.quiet_time_zone) end,
    'updatedAt', to_char(p.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  );
end;
$$;

--
-- Name: FUNCTION notification_preferences_document(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.notification_preferences_document() IS 'GET /api/notifications/preferences: the caller''s effective preferences, every type and channel (their choice, else the configured default), quiet hours or null, updatedAt (null before the first change). security definer: the defaults come from the configuration, readable by ADMINs only; it reads only the caller''s own row.';

--
-- Name: orders; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.orders (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    checkout_id uuid NOT NULL,
    buyer_id uuid,
    vendor_id uuid NOT NULL,
    vendor_name text NOT NULL,
    status app.order_status DEFAULT 'pending_payment'::app.order_status NOT NULL,
    total bigint NOT NULL,
    currency text NOT NULL,
    payment_status app.payment_status DEFAULT 'pending'::app.payment_status NOT NULL,
    shipping_address jsonb,
    carrier text,
    tracking_number text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    paid_at timestamp with time zone,
    shipped_at timestamp with time zone,
    delivered_at timestamp with time zone,
    completed_at timestamp with time zone,
    cancelled_at timestamp with time zone,
    refunded_at timestamp with time zone,
    CONSTRAINT orders_carrier_check CHECK (((char_length(carrier) >= 1) AND (char_length(carrier) <= 100))),
    CONSTRAINT orders_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT orders_total_check CHECK ((total > 0)),
    CONSTRAINT orders_tracking_number_check CHECK (((char_length(tracking_number) >= 1) AND (char_length(tracking_number) <= 100)))
);

--
-- Name: TABLE orders; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.orders IS 'One vendor''s part of a checkout: its items at the prices of the moment, its status (app.order_transitions) and payment status, shipping and the times of each step (delivered_at decides which settlement it belongs to). vendor_name is kept as it was when ordered. Written only by the order functions; buyer, vendor owner and ADMINs read it.';

--
-- Name: order_json(app.orders); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.order_json(target app.orders) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
  return (
    select jsonb_build_object(
      'id', target.id,
      'checkoutId', target.checkout_id,
      'buyerId', target.buyer_id,
      'vendor', jsonb_build_object('id', target.vendor_id, 'name', target.vendor_name),
      'status', target.status,
      'items', coalesce((
        select jsonb_agg(jsonb_build_object(
          'productId', i.product_id,
          'title', i.title,
          'unitPrice', jsonb_build_object('amount', i.unit_price, 'currency', target.currency),
          'quantity', i.quantity,
          'total', jsonb_build_object('amount', i.total, 'currency', target.currency)
        ) order by i.title, i.product_id)
        from app.order_items i where i.order_id = target.id
      ), '[]'::jsonb),
      'total', jsonb_build_object('amount', target.total, 'currency', target.currency),
      'payment', jsonb_build_object(
        'status', target.payment_status,
        'refund', (
          select jsonb_build_object('status', r.status,
                                    'amount', jsonb_build_object('amount', r.amount, 'currency', r.currency))
          from app.refunds r where r.order_id = target.id
        )
      ),
      'shipping', jsonb_build_object(
        'address', target.shipping_address,
        'carrier', target.carrier,
        'trackingNumber', target.tracking_number
      ),
      'history', coalesce((
        select jsonb_agg(jsonb_build_object(
          'from', h.from_status, 'to', h.to_status, 'actor', h.actor, 'reason', h.reason,
          'at', to_char(h.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        ) order by h.id)
        from app.order_history h where h.order_id = target.id
      ), '[]'::jsonb),
      'createdAt', to_char(target.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'updatedAt', to_char(target.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    )
  );
end;
$$;

--
-- Name: FUNCTION order_json(target app.orders); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.order_json(target app.orders) IS 'An order as the API shows it (GET /api/store/orders/:id and every order event): vendor, items with money, total, payment (with its refund), shipping and history. security invoker: items, refund and history are read with the caller''s rights, which show them to exactly those who see the order.';

--
-- Name: products; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.products (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    vendor_id uuid NOT NULL,
    title text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    category text NOT NULL,
    tags text[] DEFAULT '{}'::text[] NOT NULL,
    images text[] DEFAULT '{}'::text[] NOT NULL,
    price_amount bigint NOT NULL,
    currency text NOT NULL,
    stock integer DEFAULT 0 NOT NULL,
    reserved integer DEFAULT 0 NOT NULL,
    status app.product_status DEFAULT 'active'::app.product_status NOT NULL,
    search tsvector DEFAULT ''::tsvector NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT products_category_check CHECK (((category ~ '^[a-z0-9]+(-[a-z0-9]+)*$'::text) AND (char_length(category) <= 60))),
    CONSTRAINT products_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT products_description_check CHECK ((char_length(description) <= 10000)),
    CONSTRAINT products_images_check CHECK ((cardinality(images) <= 10)),
    CONSTRAINT products_price_amount_check CHECK (((price_amount >= 1) AND (price_amount <= '100000000000'::bigint))),
    CONSTRAINT products_reserved_check CHECK ((reserved >= 0)),
    CONSTRAINT products_reserved_within_stock CHECK ((reserved <= stock)),
    CONSTRAINT products_stock_check CHECK ((stock >= 0)),
    CONSTRAINT products_tags_check CHECK ((cardinality(tags) <= 20)),
    CONSTRAINT products_title_check CHECK (((char_length(btrim(title)) >= 1) AND (char_length(btrim(title)) <= 200)))
)
WITH (fillfactor='80');

--
-- Name: TABLE products; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.products IS 'What vendors sell, at a price in the store''s currency (integer minor units), with stock and what unpaid checkouts reserve of it (available = stock - reserved, never negative). Vendors (owners of approved vendors) write their products under RLS; visitors read the catalog through app.search_products and app.get_product. search is the weighted full-text document.';

--
-- Name: COLUMN products.reserved; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON COLUMN app.products.reserved IS 'Units held by checkouts not yet paid; changed only by the order functions, under the row''s lock.';

--
-- Name: COLUMN products.search; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON COLUMN app.products.search IS 'The weighted full-text document (app_private.product_document), set by the write trigger when the text changes. Not a generated column: Postgres recomputes those on every update, and every checkout updates reserved; with the text untouched and room in the page (fillfactor 80), a stock update is HOT and rewrites no index.';

--
-- Name: vendors; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.vendors (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid,
    name text NOT NULL,
    slug text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    logo_url text,
    contact_email text NOT NULL,
    country text NOT NULL,
    status app.vendor_status DEFAULT 'pending'::app.vendor_status NOT NULL,
    commission_bps integer,
    payout_account_id text,
    payouts_status app.payouts_status DEFAULT 'not_started'::app.payouts_status NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT vendors_commission_bps_check CHECK (((commission_bps >= 0) AND (commission_bps <= 10000))),
    CONSTRAINT vendors_contact_email_check CHECK ((((char_length(contact_email) >= 3) AND (char_length(contact_email) <= 320)) AND (contact_email ~ '^[^@\s]+@[^@\s]+$'::text))),
    CONSTRAINT vendors_country_check CHECK ((country ~ '^[A-Z]{2}$'::text)),
    CONSTRAINT vendors_description_check CHECK ((char_length(description) <= 5000)),
    CONSTRAINT vendors_logo_url_check CHECK ((char_length(logo_url) <= 2048)),
    CONSTRAINT vendors_name_check CHECK (((char_length(btrim(name)) >= 2) AND (char_length(btrim(name)) <= 100))),
    CONSTRAINT vendors_payout_account_id_check CHECK (((char_length(payout_account_id) >= 1) AND (char_length(payout_account_id) <= 255))),
    CONSTRAINT vendors_slug_check CHECK (((slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$'::text) AND (char_length(slug) <= 80)))
);

--
-- Name: TABLE vendors; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.vendors IS 'Sellers of the store, owned by one user each. Only approved vendors sell and appear in the catalog. commission_bps overrides store.commissionBps when set; payout_account_id is the vendor''s Stripe Connect account, and payouts_status follows its account.updated webhooks. Rows are written only by the functions below; owners and ADMINs read them (contact e-mail, account, commission), everyone else reads the public fields of approved vendors through app.list_vendors.';

--
-- Name: product_json(app.products, app.vendors); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.product_json(product app.products, vendor app.vendors) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'id', product.id,
    'vendor', jsonb_build_object('id', vendor.id, 'name', vendor.name, 'slug', vendor.slug),
    'title', product.title,
    'description', product.description,
    'category', product.category,
    'tags', to_jsonb(product.tags),
    'images', to_jsonb(product.images),
    'price', jsonb_build_object('amount', product.price_amount, 'currency', product.currency),
    'stock', jsonb_build_object('available', greatest(product.stock - product.reserved, 0)),
    'status', product.status,
    'createdAt', to_char(product.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updatedAt', to_char(product.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  )
$$;

--
-- Name: FUNCTION product_json(product app.products, vendor app.vendors); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.product_json(product app.products, vendor app.vendors) IS 'A product as the API shows it: price as money, available stock (stock less reservations), the vendor''s id, name and slug. A builder: reads no table.';

--
-- Name: public_config(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.public_config() RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'version', coalesce(c.version, 0),
    'whiteLabel', merged -> 'whiteLabel',
    'features', merged -> 'features'
  )
  from (select max(v.version) as version from app.config_versions v) c,
       app_private.jsonb_merge_deep(
         app_private.config_defaults(),
         coalesce((select v.config from app.config_versions v order by v.version desc limit 1), '{}'::jsonb)
       ) as merged
$$;

--
-- Name: FUNCTION public_config(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.public_config() IS 'The public part of the configuration (white-label and feature flags, defaults filled in), for anyone, signed in or not. security definer because app.config_versions is readable by admins only; it returns only these two sections, never the rest.';

--
-- Name: readable_topics(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.readable_topics() RETURNS SETOF text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  me uuid := auth.uid();
  session_claim text := auth.jwt() ->> 'session_id';
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    return;
  end if;
  -- A signed-out (revoked) session reads nothing, on any transport, even before its token expires.
  if session_claim is null
     or session_claim !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
     or not exists (
       select 1 from app.sessions s
       where s.id = session_claim::uuid and s.user_id = me
         and s.revoked_at is null and s.expires_at > now()
     ) then
    return;
  end if;
  return next 'user:' || me::text;
  if app.is_admin() then
    return next 'admin';
  end if;
  return query
    select 'conversation:' || p.conversation_id::text
    from app.conversation_participants p where p.user_id = me;
  -- The owner reads its vendor's topic (orders of the vendor), whatever the vendor's status.
  return query
    select 'vendor:' || v.id::text from app.vendors v where v.owner_id = me;
end;
$_$;

--
-- Name: FUNCTION readable_topics(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.readable_topics() IS 'THE topic rule, as the set of topics the current user may read: conversation:<id> for participants (active users of at least SUBSCRIBER), user:<id> for that user, vendor:<id> for the vendor''s owner, admin for ADMINs; only for a live session, so signout ends realtime access at once. Every transport uses it: SSE and long-poll through app.can_read_topic, Realtime through the realtime.messages policy, the app.events policy as a set (evaluated once per statement, not per event row). security definer: it reads memberships, vendors and sessions the caller may not read, and returns only the caller''s own topics.';

--
-- Name: register_push_device(text, app.push_platform, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.register_push_device(device_token text, device_platform app.push_platform, name text DEFAULT NULL::text) RETURNS TABLE(device_id uuid, platform app.push_platform, created_at timestamp with time zone, created boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
#variable_conflict use_column
declare
  me uuid := auth.uid();
  existing app.push_devices;
  device app.push_devices;
begin
  if me is null then
    raise exception 'sign in to register a device' using errcode = 'AG403';
  end if;
  if device_token is null or char_length(device_token) not between 1 and 1024 then
    raise exception 'a device token has 1 to 1024 characters' using errcode = 'AG400';
  end if;
  select * into existing from app.push_devices d where d.token = device_token for update;
  if found and existing.user_id = me then
    update app.push_devices d set platform = device_platform, device_name = coalesce(name, d.device_name)
    where d.id = existing.id returning * into device;
    return query select device.id, device.platform, device.created_at, false;
    return;
  end if;
  if found then
    -- Another user's token moves: a new row, so what was queued for them never reaches the caller.
    delete from app.push_devices d where d.id = existing.id;
  end if;
  insert into app.push_devices (user_id, token, platform, device_name)
  values (me, device_token, device_platform, name)
  on conflict (token) do nothing
  returning * into device;
  if device.id is null then
    -- A concurrent registration of the same token won; it is registered, to whoever was first.
    raise exception 'this token is being registered at the same time; try again' using errcode = 'AG409';
  end if;
  return query select device.id, device.platform, device.created_at, true;
end;
$$;

--
-- Name: FUNCTION register_push_device(device_token text, device_platform app.push_platform, name text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.register_push_device(device_token text, device_platform app.push_platform, name text) IS 'POST /api/notifications/fcm/register: registers an FCM token for the caller (created true), or refreshes it when it is already theirs (created false); a token registered by another user moves to the caller as a new device (deliveries queued for the previous owner then fail as device_gone instead of reaching the caller). security definer: moving a token touches another user''s row, which RLS hides; the token itself is never returned.';

--
-- Name: remove_participant(uuid, uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.remove_participant(target_conversation_id uuid, target_user_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  conv app.conversations;
begin
  select * into conv from app.conversations c where c.id = target_conversation_id for update;
  if not found or not exists (
    select 1 from app.conversation_participants p where p.conversation_id = conv.id and p.user_id = me
  ) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  if conv.type <> 'group' then
    raise exception 'people cannot be removed from a direct conversation' using errcode = 'AG422';
  end if;
  if target_user_id <> me and conv.created_by is distinct from me then
    raise exception 'only the group''s creator removes people' using errcode = 'AG403';
  end if;
  delete from app.conversation_participants p
  where p.conversation_id = conv.id and p.user_id = target_user_id;
  if not found then
    raise exception 'not a participant' using errcode = 'AG404';
  end if;
  -- A group is never left without someone to manage it: the longest-standing participant takes
  -- over from a creator who leaves; a group nobody is in any more is removed.
  if conv.created_by = target_user_id then
    update app.conversations c set created_by = (
      select p.user_id from app.conversation_participants p
      where p.conversation_id = conv.id order by p.joined_at, p.user_id limit 1
    ) where c.id = conv.id;
  end if;
  if not exists (select 1 from app.conversation_participants p where p.conversation_id = conv.id) then
    delete from app.conversations c where c.id = conv.id;
  end if;
end;
$$;

--
-- Name: FUNCTION remove_participant(target_conversation_id uuid, target_user_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.remove_participant(target_conversation_id uuid, target_user_id uuid) IS 'The group''s creator removes someone; anyone may leave a group; direct conversations are fixed. A creator who leaves hands the group to the longest-standing participant; an empty group is removed. security definer as app.create_conversation.';

--
-- Name: run_settlements(timestamp with time zone); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.run_settlements(cut_off timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN runs settlements' using errcode = 'AG403';
  end if;
  return app_private.settle(least(coalesce(cut_off, now()), now()), auth.uid(), false);
end;
$$;

--
-- Name: FUNCTION run_settlements(cut_off timestamp with time zone); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.run_settlements(cut_off timestamp with time zone) IS 'POST /api/admin/settlements/run: the daily settlement now, up to cut_off (default and at most now). A run already in progress is AG409. security definer: settling reads and writes every vendor''s orders and ledger; the ADMIN check is explicit.';

--
-- Name: search_products(text, text, uuid, bigint, bigint, boolean, text, text, text, uuid, integer); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.search_products(search text DEFAULT NULL::text, category_filter text DEFAULT NULL::text, vendor_filter uuid DEFAULT NULL::uuid, min_price bigint DEFAULT NULL::bigint, max_price bigint DEFAULT NULL::bigint, in_stock boolean DEFAULT NULL::boolean, sort_by text DEFAULT 'relevance'::text, cursor_mode text DEFAULT NULL::text, cursor_key text DEFAULT NULL::text, cursor_id uuid DEFAULT NULL::uuid, page_size integer DEFAULT 50) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  own boolean := vendor_filter is not null
    and exists (select 1 from app.my_vendor_ids() x where x = vendor_filter);
  query tsquery;
  mode text;
  visible text;
  text_match text;
  rank_expr text;
  f_category text := case when category_filter is null then 'true' else 'p.category = $2' end;
  f_vendor text := case when vendor_filter is null then 'true' else 'p.vendor_id = $3' end;
  f_price text := concat_ws(' and ',
    'true',
    case when min_price is not null then 'p.price_amount >= $4' end,
    case when max_price is not null then 'p.price_amount <= $5' end);
  f_stock text := case when in_stock then 'p.stock > p.reserved'
    when in_stock = false then 'p.stock <= p.reserved' else 'true' end;
  order_by text;
  after text := 'true';
  key_expr text;
  rows jsonb;
  items jsonb;
  next_key jsonb;
  facets jsonb;
  limit_rows integer := least(greatest(page_size, 1), 200);
  corrected text;
  found_any boolean;
begin
  if sort_by not in ('relevance', 'newest', 'price_asc', 'price_desc') then
    raise exception 'unknown sort %', sort_by using errcode = 'AG400';
  end if;
  -- The vendor's own view (vendorId = its own vendor) includes drafts and archived products.
  visible := case when own then 'p.vendor_id = $3'
    else $v$p.status = 'active' and v.status = 'approved'$v$ end;

  if search is not null and btrim(search) <> '' then
    query := websearch_to_tsquery('english'::regconfig, search);
    mode := cursor_mode;
    if mode is null then
      mode := 'fts';
      execute format('select exists (select 1 from app.products p join app.vendors v on v.id = p.vendor_id
                      where %s and p.search @@ $6)', visible)
        into strict found_any using search, category_filter, vendor_filter, min_price, max_price, query;
      if not found_any then
        corrected := app_private.correct_spelling(search);
        if corrected is not null then
          mode := 'spell:' || corrected;
        end if;
      end if;
    end if;
    if mode like 'spell:%' then
      query := websearch_to_tsquery('english'::regconfig, substr(mode, 7));
    elsif mode <> 'fts' then
      raise exception 'unknown search mode' using errcode = 'AG400';
    end if;
    text_match := 'p.search @@ $6';
    rank_expr := 'ts_rank_cd(p.search, $6)';
  else
    mode := 'none';
    text_match := 'true';
  end if;

  if sort_by = 'relevance' and mode <> 'none' then
    order_by := rank_expr || ' desc, p.id desc';
    key_expr := '(' || rank_expr || ')::real::text';
    if cursor_id is not null then
      after := '(' || rank_expr || ', p.id) < ($7::real, $8)';
    end if;
  elsif sort_by in ('relevance', 'newest') then
    order_by := 'p.created_at desc, p.id desc';
    key_expr := 'p.created_at::text';
    if cursor_id is not null then
      after := '(p.created_at, p.id) < ($7::timestamptz, $8)';
    end if;
  elsif sort_by = 'price_asc' then
    order_by := 'p.price_amount asc, p.id asc';
    key_expr := 'p.price_amount::text';
    if cursor_id is not null then
      after := '(p.price_amount, p.id) > ($7::bigint, $8)';
    end if;
  else
    order_by := 'p.price_amount desc, p.id desc';
    key_expr := 'p.price_amount::text';
    if cursor_id is not null then
      after := '(p.price_amount, p.id) < ($7::bigint, $8)';
    end if;
  end if;

  -- One row more than the page: it only says that another page exists. Aggregating a sorted,
  -- limited subquery keeps its order (and lets the planner stop after limit rows).
  execute format($q$
    select coalesce(jsonb_agg(jsonb_build_object('item', app.product_json(x.p, x.v), 'key', x.sort_key)), '[]'::jsonb)
    from (
      select p, v, %s as sort_key
      from app.products p join app.vendors v on v.id = p.vendor_id
      where %s and %s and %s and %s and %s and %s and %s
      order by %s
      limit $9
    ) x
  $q$, key_expr, visible, text_match, f_category, f_vendor, f_price, f_stock, after, order_by)
  into rows
  using search, category_filter, vendor_filter, min_price, max_price, query, cursor_key, cursor_id,
        limit_rows + 1;
  if jsonb_array_length(rows) > limit_rows then
    next_key := jsonb_build_array(rows -> (limit_rows - 1) -> 'key', rows -> (limit_rows - 1) -> 'item' -> 'id');
  end if;
  select coalesce(jsonb_agg(e -> 'item' order by i), '[]'::jsonb) into items
  from jsonb_array_elements(rows) with ordinality as t (e, i)
  where i <= limit_rows;

  -- The unsearched catalog without a price filter (the front page, a category, a vendor's shop):
  -- the category and vendor facets are sums of app_private.catalog_counts, the price range the
  -- first row of the price index each way.
  if mode = 'none' and min_price is null and max_price is null and not own then
    execute format($q$
      with c as (
        select c.vendor_id, c.category, sum(c.products)::integer as n
        from app_private.catalog_counts c join app.vendors v on v.id = c.vendor_id
        where v.status = 'approved' and c.products > 0 and %3$s
        group by c.vendor_id, c.category
      )
      select jsonb_build_object(
        'categories', coalesce((
          select jsonb_agg(jsonb_build_object('value', x.category, 'count', x.n) order by x.n desc, x.category)
          from (select c.category, sum(c.n)::integer as n from c where %2$s group by c.category) x), '[]'::jsonb),
        'vendors', coalesce((
          select jsonb_agg(jsonb_build_object('id', x.vendor_id, 'name', fv.name, 'count', x.n)
                           order by x.n desc, fv.name, x.vendor_id)
          from (select c.vendor_id, sum(c.n)::integer as n from c where %1$s group by c.vendor_id) x
          join app.vendors fv on fv.id = x.vendor_id), '[]'::jsonb),
        'price', jsonb_build_object(
          'min', (select p.price_amount from app.products p join app.vendors v on v.id = p.vendor_id
                  where %4$s and %5$s and %6$s and %7$s order by p.price_amount asc limit 1),
          'max', (select p.price_amount from app.products p join app.vendors v on v.id = p.vendor_id
                  where %4$s and %5$s and %6$s and %7$s order by p.price_amount desc limit 1))
      )
    $q$,
      replace(f_category, 'p.', 'c.'), replace(f_vendor, 'p.', 'c.'),
      case when in_stock then 'c.in_stock' when in_stock = false then 'not c.in_stock' else 'true' end,
      visible, f_category, f_vendor, f_stock)
    into facets
    using search, category_filter, vendor_filter, min_price, max_price, query;
    return jsonb_build_object(
      'items', items,
      'next', case when next_key is null then null
        else jsonb_build_array(sort_by, mode, next_key -> 0, next_key -> 1) end,
      'facets', facets,
      'mode', mode,
      'corrected', case when mode like 'spell:%' then substr(mode, 7) end
    );
  end if;

  -- One pass: every facet is a grouping set of the same scan, each count filtered by the other
  -- facets' filters. Not a materialized CTE: the aggregate reads the join directly, and without
  -- a text search or a stock filter that join is an index-only scan (products_facets_idx).
  execute format($q$
    with g as (
      select grouping(p.category) as gc, grouping(p.vendor_id) as gv, p.category, p.vendor_id,
             count(*) filter (where %2$s and %3$s and %4$s) as n_category,
             count(*) filter (where %1$s and %3$s and %4$s) as n_vendor,
             min(p.price_amount) filter (where %1$s and %2$s and %4$s) as price_min,
             max(p.price_amount) filter (where %1$s and %2$s and %4$s) as price_max
      from app.products p join app.vendors v on v.id = p.vendor_id
      where %5$s and %6$s
      group by grouping sets ((p.category), (p.vendor_id), ())
    )
    select jsonb_build_object(
      'categories', coalesce((
        select jsonb_agg(jsonb_build_object('value', g.category, 'count', g.n_category)
                         order by g.n_category desc, g.category)
        from g where g.gc = 0 and g.n_category > 0), '[]'::jsonb),
      'vendors', coalesce((
        select jsonb_agg(jsonb_build_object('id', g.vendor_id, 'name', fv.name, 'count', g.n_vendor)
                         order by g.n_vendor desc, fv.name, g.vendor_id)
        from g join app.vendors fv on fv.id = g.vendor_id
        where g.gc = 1 and g.gv = 0 and g.n_vendor > 0), '[]'::jsonb),
      'price', coalesce((
        select jsonb_build_object('min', g.price_min, 'max', g.price_max)
        from g where g.gc = 1 and g.gv = 1), jsonb_build_object('min', null, 'max', null))
    )
  $q$, f_category, f_vendor, f_price, f_stock, visible, text_match)
  into facets
  using search, category_filter, vendor_filter, min_price, max_price, query;

  return jsonb_build_object(
    'items', items,
    'next', case when next_key is null then null
      else jsonb_build_array(sort_by, mode, next_key -> 0, next_key -> 1) end,
    'facets', facets,
    'mode', mode,
    'corrected', case when mode like 'spell:%' then substr(mode, 7) end
  );
end;
$_$;

--
-- Name: FUNCTION search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer) IS 'The catalog search: active products of approved vendors (or, with vendor_filter naming the caller''s own vendor, all of its products), full-text search ranked by ts_rank_cd with spelling correction when nothing matches, filters (category, vendor, price in minor units inclusive, in stock), sorts (relevance, newest, price_asc, price_desc) with keyset cursors, and facets that apply every filter but their own. Returns {items, next: [sort, mode, key, id] | null, facets, mode, corrected}. security definer: visitors hold no privilege on app tables; visibility is decided here, and every value is a bound parameter.';

--
-- Name: send_message(uuid, text, uuid, uuid[], text, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.send_message(target_conversation_id uuid, message_content text, reply_to uuid DEFAULT NULL::uuid, attachment_ids uuid[] DEFAULT '{}'::uuid[], idempotency_key text DEFAULT NULL::text, request_hash text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  claim jsonb;
  max_length integer;
  attached integer;
  created app.messages;
  files jsonb;
  result jsonb;
begin
  if not app.is_participant(target_conversation_id) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  if idempotency_key is not null then
    claim := app.claim_idempotency_key(idempotency_key, 'send_message', request_hash);
    if claim ? 'conflict' then
      raise exception 'this Idempotency-Key was used with another request' using errcode = 'AG409';
    end if;
    if jsonb_typeof(claim -> 'response') = 'object' then
      return claim -> 'response';
    end if;
  end if;
  max_length := app.config_int('limits', 'messageMaxLength');
  if char_length(message_content) > max_length then
    raise exception 'a message has at most % characters', max_length using errcode = 'AG400';
  end if;
  insert into app.messages (conversation_id, sender_id, content, reply_to_id)
  values (target_conversation_id, me, message_content, reply_to)
  returning * into created;
  if cardinality(attachment_ids) > 0 then
    update app.attachments a set message_id = created.id, conversation_id = target_conversation_id
    where a.id = any(attachment_ids) and a.uploader_id = me and a.message_id is null;
    get diagnostics attached = row_count;
    if attached <> cardinality(attachment_ids) then
      raise exception 'every attachment must be your own upload, not yet attached' using errcode = 'AG422';
    end if;
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id) into files
    from app.attachments a where a.message_id = created.id;
  end if;
  result := app.message_object(created, files);
  if idempotency_key is not null then
    perform app.store_idempotent_response(idempotency_key, result);
  end if;
  return result;
end;
$$;

--
-- Name: FUNCTION send_message(target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.send_message(target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text) IS 'Sends a message in one call: participation (AG404 otherwise), the idempotency key (the first response again, AG409 for another body), the configured length, the insert (RLS: the sender is the caller; the seq trigger checks the reply) and the attachments (the caller''s own, not yet attached, else AG422). Returns the message as the API shows it. security invoker: every write is the caller''s, under RLS.';

--
-- Name: send_typing(uuid, boolean, integer); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer DEFAULT 2000) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  hits integer;
begin
  if not app.has_role('SUBSCRIBER') or not exists (
    select 1 from app.conversation_participants p
    where p.conversation_id = target_conversation_id and p.user_id = me
  ) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  -- The caller names the throttle (a server setting), but cannot turn it off.
  throttle_ms := least(greatest(throttle_ms, 250), 60000);
  insert into app_private.rate_limits as r (bucket, window_start, hits)
  values (
    'typing:' || me || ':' || target_conversation_id || ':' || is_typing,
    to_timestamp(floor(extract(epoch from clock_timestamp()) * 1000 / throttle_ms) * throttle_ms / 1000.0),
    1
  )
  on conflict (bucket, window_start) do update set hits = r.hits + 1
  returning r.hits into hits;
  if hits > 1 then
    return false;
  end if;
  perform app_private.emit_ephemeral('conversation:' || target_conversation_id, 'typing',
    jsonb_build_object('conversationId', target_conversation_id, 'userId', me, 'isTyping', is_typing,
                       'expiresAt', to_char((now() + interval '5 seconds') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')));
  return true;
end;
$$;

--
-- Name: FUNCTION send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer) IS 'A participant''s ephemeral typing signal, throttled per user, conversation and state (one per throttle_ms, at least 250; the rest are accepted and dropped). Returns whether it was sent. security definer: it counts in the private rate-limit table; it checks participation first.';

--
-- Name: set_vendor_status(uuid, app.vendor_status, text, integer); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.set_vendor_status(target_vendor_id uuid, new_status app.vendor_status, decision_reason text, new_commission_bps integer DEFAULT NULL::integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  vendor app.vendors;
  allowed app.vendor_status[];
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN decides on vendors' using errcode = 'AG403';
  end if;
  if char_length(btrim(coalesce(decision_reason, ''))) = 0 then
    raise exception 'a decision needs a reason' using errcode = 'AG400';
  end if;
  select * into vendor from app.vendors v where v.id = target_vendor_id for update;
  if not found then
    raise exception 'vendor not found' using errcode = 'AG404';
  end if;
  allowed := case vendor.status
    when 'pending' then array['approved', 'rejected']::app.vendor_status[]
    when 'approved' then array['suspended']::app.vendor_status[]
    when 'suspended' then array['approved']::app.vendor_status[]
    else array[]::app.vendor_status[]
  end;
  -- The same status is a commission change only.
  if not (new_status = any(allowed)
          or (new_status = vendor.status and new_commission_bps is not null and new_status <> 'rejected')) then
    raise exception 'a % vendor cannot become %', vendor.status, new_status
      using errcode = 'AG422', hint = 'invalid_transition',
            detail = jsonb_build_object('from', vendor.status, 'to', new_status, 'allowed', to_jsonb(allowed))::text;
  end if;
  insert into app.vendor_decisions (vendor_id, from_status, to_status, reason, commission_bps, decided_by)
  values (vendor.id, vendor.status, new_status, btrim(decision_reason), new_commission_bps, auth.uid());
  update app.vendors v
  set status = new_status, commission_bps = coalesce(new_commission_bps, v.commission_bps)
  where v.id = vendor.id
  returning * into vendor;
  if vendor.owner_id is not null then
    perform app_private.emit_event('user:' || vendor.owner_id, 'vendor.status_changed',
                                   app.vendor_json(vendor, true));
  end if;
  perform app_private.after_vendor_change(vendor, decision_reason);
  return app.vendor_json(vendor, true);
end;
$$;

--
-- Name: FUNCTION set_vendor_status(target_vendor_id uuid, new_status app.vendor_status, decision_reason text, new_commission_bps integer); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.set_vendor_status(target_vendor_id uuid, new_status app.vendor_status, decision_reason text, new_commission_bps integer) IS 'An ADMIN approves, rejects, suspends or reinstates a vendor, or changes its commission, with a reason recorded in app.vendor_decisions; a move the vendor''s status does not allow is AG422 invalid_transition with the allowed ones. The owner gets vendor.status_changed on user:<ownerId>. security definer: vendors have no update grant; the ADMIN check is explicit.';

--
-- Name: settlements; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.settlements (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    run_id uuid NOT NULL,
    vendor_id uuid NOT NULL,
    period_end timestamp with time zone NOT NULL,
    order_count integer NOT NULL,
    gross bigint NOT NULL,
    commission bigint NOT NULL,
    refunds bigint NOT NULL,
    net bigint NOT NULL,
    currency text NOT NULL,
    status app.settlement_status NOT NULL,
    transfer_id text,
    failure_reason text,
    carried_into uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    paid_at timestamp with time zone,
    CONSTRAINT settlements_commission_check CHECK ((commission >= 0)),
    CONSTRAINT settlements_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT settlements_gross_check CHECK ((gross >= 0)),
    CONSTRAINT settlements_net CHECK ((net = ((gross - commission) - refunds))),
    CONSTRAINT settlements_order_count_check CHECK ((order_count >= 0)),
    CONSTRAINT settlements_refunds_check CHECK ((refunds >= 0))
);

--
-- Name: TABLE settlements; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.settlements IS 'What one run owes one vendor: gross of the orders it settles, commission, refunds deducted, net, and the payout''s status and transfer. The amounts never change after the run (only status, transfer and carry fields do).';

--
-- Name: settlement_json(app.settlements); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.settlement_json(settlement app.settlements) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'id', settlement.id,
    'vendorId', settlement.vendor_id,
    'runId', settlement.run_id,
    'periodEnd', to_char(settlement.period_end at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'orderCount', settlement.order_count,
    'gross', jsonb_build_object('amount', settlement.gross, 'currency', settlement.currency),
    'commission', jsonb_build_object('amount', settlement.commission, 'currency', settlement.currency),
    'refunds', jsonb_build_object('amount', settlement.refunds, 'currency', settlement.currency),
    'net', jsonb_build_object('amount', settlement.net, 'currency', settlement.currency),
    'status', settlement.status,
    'transferId', settlement.transfer_id,
    'carriedInto', settlement.carried_into,
    'createdAt', to_char(settlement.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'paidAt', to_char(settlement.paid_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  )
$$;

--
-- Name: FUNCTION settlement_json(settlement app.settlements); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.settlement_json(settlement app.settlements) IS 'A settlement as the API shows it (money as { amount, currency }). A builder: reads no table.';

--
-- Name: sign_out_user(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.sign_out_user(target_user_id uuid) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  caller uuid := app_private.lock_admin_caller();
  revoked integer;
begin
  if not exists (select 1 from app.users u where u.id = target_user_id) then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  revoked := app_private.revoke_sessions(target_user_id, 'admin_signout');
  perform app_private.record_security_event('admin.sessions_revoked', 'warning', target_user_id,
    jsonb_build_object('by', caller, 'sessionsRevoked', revoked));
  return revoked;
end;
$$;

--
-- Name: FUNCTION sign_out_user(target_user_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.sign_out_user(target_user_id uuid) IS 'An ADMIN ends every live session of a user at once (the user may sign in again); recorded as admin.sessions_revoked in the same transaction. Returns how many ended. security definer: no API role may end another user''s sessions; the caller is checked as in app.change_user_status.';

--
-- Name: store_idempotent_response(text, jsonb); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.store_idempotent_response(idempotency_key text, response jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  update app_private.idempotency_keys k set response = store_idempotent_response.response
  where k.user_id = (select auth.uid()) and k.key = idempotency_key;
end;
$$;

--
-- Name: FUNCTION store_idempotent_response(idempotency_key text, response jsonb); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.store_idempotent_response(idempotency_key text, response jsonb) IS 'Records the first response for a claimed key, in the same transaction as the work it describes. security definer for the same reason as claim_idempotency_key.';

--
-- Name: unlink_identity(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.unlink_identity(target_identity_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := (select auth.uid());
  identity app.identities;
begin
  if me is null or not exists (select 1 from app.users u where u.id = me and u.status = 'active') then
    raise exception 'sign in to unlink an identity' using errcode = '42501';
  end if;
  -- The user's row lock serializes unlinks (and links, which lock it too): two at once cannot
  -- both see a second identity and leave none.
  perform 1 from app.users u where u.id = me for update;
  select * into identity from app.identities i where i.id = target_identity_id and i.user_id = me;
  if not found then
    raise exception 'identity not found' using errcode = 'AG404';
  end if;
  if identity.provider = 'email' then
    raise exception 'the e-mail identity is the account''s own address and cannot be unlinked'
      using errcode = 'AG422';
  end if;
  if (select count(*) from app.identities i where i.user_id = me) <= 1 then
    raise exception 'the last identity of an account cannot be unlinked' using errcode = 'AG422';
  end if;
  delete from app.identities i where i.id = identity.id;
  perform app_private.record_security_event('auth.identity_unlinked', 'warning', me,
    jsonb_build_object('provider', identity.provider, 'identityId', identity.id));
end;
$$;

--
-- Name: FUNCTION unlink_identity(target_identity_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.unlink_identity(target_identity_id uuid) IS 'The signed-in user removes one of their sign-in identities (Google, Apple, a wallet); never the last one, never the e-mail identity (magic links reach the account through its address anyway). Recorded as auth.identity_unlinked in the same transaction. security definer: identities have no delete grant; ownership and the rules are checked here, under the user''s row lock.';

--
-- Name: unregister_push_device(text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.unregister_push_device(device_token text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  delete from app.push_devices d where d.token = device_token and d.user_id = auth.uid();
  if not found then
    raise exception 'device not found' using errcode = 'AG404';
  end if;
  return true;
end;
$$;

--
-- Name: FUNCTION unregister_push_device(device_token text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.unregister_push_device(device_token text) IS 'DELETE /api/notifications/fcm/register: removes one of the caller''s own tokens; a token that is not theirs (or unknown) is AG404, so no one learns whose a token is. security definer: no API role may delete devices directly.';

--
-- Name: update_notification_preferences(jsonb); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.update_notification_preferences(patch jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $_$
declare
  me uuid := auth.uid();
  current_types jsonb;
  merged jsonb;
  quiet jsonb := patch -> 'quietHours';
  has_quiet boolean := patch ? 'quietHours';
begin
  if me is null then
    raise exception 'sign in to change preferences' using errcode = 'AG403';
  end if;
  if jsonb_typeof(patch) <> 'object' or exists (
       select 1 from jsonb_object_keys(patch) k where k not in ('types', 'quietHours')) then
    raise exception 'preferences take types and quietHours' using errcode = 'AG400';
  end if;
  if patch ? 'types' and jsonb_typeof(patch -> 'types') <> 'object' then
    raise exception 'types is an object of types' using errcode = 'AG400';
  end if;
  if has_quiet and jsonb_typeof(quiet) not in ('object', 'null') then
    raise exception 'quietHours is { start, end, timeZone } or null' using errcode = 'AG400';
  end if;
  if has_quiet and jsonb_typeof(quiet) = 'object' and (
       coalesce(quiet ->> 'start', '') !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
       or coalesce(quiet ->> 'end', '') !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
       or jsonb_typeof(quiet -> 'timeZone') is distinct from 'string') then
    raise exception 'quiet hours are { start: "HH:MM", end: "HH:MM", timeZone }' using errcode = 'AG400';
  end if;
  select p.types into current_types from app.notification_preferences p where p.user_id = me;
  current_types := coalesce(current_types, '{}'::jsonb);
  -- Two levels, type then channel: a patch's channels are laid over the stored ones.
  select coalesce(jsonb_object_agg(k, case
           when jsonb_typeof(patch -> 'types' -> k) = 'object'
             then coalesce(current_types -> k, '{}'::jsonb) || (patch -> 'types' -> k)
           else coalesce(patch -> 'types' -> k, current_types -> k) end), '{}'::jsonb)
  into merged
  from (select jsonb_object_keys(current_types)
        union select jsonb_object_keys(coalesce(patch -> 'types', '{}'::jsonb))) keys (k);
  insert into app.notification_preferences as p (user_id, types, quiet_start, quiet_end, quiet_time_zone)
  values (
    me, merged,
    case when has_quiet then (quiet ->> 'start')::time end,
    case when has_quiet then (quiet ->> 'end')::time end,
    case when has_quiet then quiet ->> 'timeZone' end
  )
  on conflict (user_id) do update set
    types = excluded.types,
    quiet_start = case when has_quiet then excluded.quiet_start else p.quiet_start end,
    quiet_end = case when has_quiet then excluded.quiet_end else p.quiet_end end,
    quiet_time_zone = case when has_quiet then excluded.quiet_time_zone else p.quiet_time_zone end;
  return app.notification_preferences_document();
end;
$_$;

--
-- Name: FUNCTION update_notification_preferences(patch jsonb); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.update_notification_preferences(patch jsonb) IS 'PUT /api/notifications/preferences: lays a partial document ({ types?: { TYPE?: { inApp?, push?, email? } }, quietHours?: { start, end, timeZone } | null }) over the caller''s choices and returns the whole effective document. AG400 for unknown keys, types or channels, times that are not HH:MM, an unknown time zone (the row''s trigger checks pg_timezone_names). security invoker: the caller''s own row, under RLS.';

--
-- Name: vendor_json(app.vendors, boolean); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.vendor_json(vendor app.vendors, detailed boolean DEFAULT false) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'id', vendor.id,
    'name', vendor.name,
    'slug', vendor.slug,
    'description', vendor.description,
    'logoUrl', vendor.logo_url,
    'status', vendor.status,
    'payouts', jsonb_build_object('status', vendor.payouts_status),
    'createdAt', to_char(vendor.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  ) || case when detailed then jsonb_build_object(
    'ownerId', vendor.owner_id,
    'contactEmail', vendor.contact_email,
    'country', vendor.country,
    'commissionBps', coalesce(vendor.commission_bps, app.config_int('store', 'commissionBps')),
    'commissionOverride', vendor.commission_bps is not null,
    'updatedAt', to_char(vendor.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'decisions', coalesce((
      select jsonb_agg(jsonb_build_object(
        'from', d.from_status, 'to', d.to_status, 'reason', d.reason,
        'commissionBps', d.commission_bps, 'decidedBy', d.decided_by,
        'at', to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      ) order by d.id)
      from app.vendor_decisions d where d.vendor_id = vendor.id
    ), '[]'::jsonb)
  ) else '{}'::jsonb end
$$;

--
-- Name: FUNCTION vendor_json(vendor app.vendors, detailed boolean); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.vendor_json(vendor app.vendors, detailed boolean) IS 'A vendor as the API shows it: the public fields, plus owner, contact, country, the effective commission and the decision history when detailed (for the owner and ADMINs; callers decide, and RLS on app.vendor_decisions still applies to the history). security invoker.';

--
-- Name: wallet_address_of(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.wallet_address_of(target uuid) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if not app.has_role('SUBSCRIBER') then
    raise exception 'the wallet needs the SUBSCRIBER role' using errcode = '42501';
  end if;
  return (
    select w.address from app.wallets w join app.users u on u.id = w.user_id
    where w.user_id = target and u.status = 'active'
  );
end;
$$;

--
-- Name: FUNCTION wallet_address_of(target uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.wallet_address_of(target uuid) IS 'The wallet address of an active user, for a transfer addressed by user id; null when the user is unknown, suspended or has no wallet. security definer: wallets are readable only by their owners; it returns one address (public on the chain anyway) to SUBSCRIBER and above.';

--
-- Name: wallet_chain_head(integer); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.wallet_chain_head(chain integer) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return (
    select h.block_number from app_private.chain_heads h where h.chain_id = chain
  );
end;
$$;

--
-- Name: FUNCTION wallet_chain_head(chain integer); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.wallet_chain_head(chain integer) IS 'The highest block the platform has seen on a chain, for counting confirmations. security definer: the heads are server state in app_private; it returns one public number.';

--
-- Name: wallet_transactions; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.wallet_transactions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    wallet_id uuid NOT NULL,
    user_id uuid NOT NULL,
    direction app.wallet_transaction_direction NOT NULL,
    status app.wallet_transaction_status NOT NULL,
    chain_id integer NOT NULL,
    token_kind app.wallet_token_kind NOT NULL,
    token_address text,
    token_symbol text NOT NULL,
    token_name text NOT NULL,
    token_decimals smallint NOT NULL,
    from_address text NOT NULL,
    to_address text NOT NULL,
    to_user_id uuid,
    amount numeric(78,0) NOT NULL,
    hash text,
    nonce bigint,
    log_index integer,
    block_number bigint,
    block_hash text,
    gas_limit numeric(78,0),
    max_fee_per_gas numeric(78,0),
    max_priority_fee_per_gas numeric(78,0),
    fee numeric(78,0),
    error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone,
    submitted_at timestamp with time zone,
    confirmed_at timestamp with time zone,
    CONSTRAINT wallet_transactions_amount_check CHECK ((amount > (0)::numeric)),
    CONSTRAINT wallet_transactions_block_hash_check CHECK ((block_hash ~ '^0x[0-9a-f]{64}$'::text)),
    CONSTRAINT wallet_transactions_block_number_check CHECK ((block_number >= 0)),
    CONSTRAINT wallet_transactions_chain_id_check CHECK ((chain_id > 0)),
    CONSTRAINT wallet_transactions_error_check CHECK ((char_length(error) <= 500)),
    CONSTRAINT wallet_transactions_fee_check CHECK ((fee >= (0)::numeric)),
    CONSTRAINT wallet_transactions_from_address_check CHECK ((from_address ~ '^0x[0-9a-fA-F]{40}$'::text)),
    CONSTRAINT wallet_transactions_gas_limit_check CHECK ((gas_limit > (0)::numeric)),
    CONSTRAINT wallet_transactions_hash_check CHECK ((hash ~ '^0x[0-9a-f]{64}$'::text)),
    CONSTRAINT wallet_transactions_in_shape CHECK (((direction = 'out'::app.wallet_transaction_direction) OR ((hash IS NOT NULL) AND (log_index IS NOT NULL) AND (block_number IS NOT NULL)))),
    CONSTRAINT wallet_transactions_log_index_check CHECK ((log_index >= '-1'::integer)),
    CONSTRAINT wallet_transactions_max_fee_per_gas_check CHECK ((max_fee_per_gas >= (0)::numeric)),
    CONSTRAINT wallet_transactions_max_priority_fee_per_gas_check CHECK ((max_priority_fee_per_gas >= (0)::numeric)),
    CONSTRAINT wallet_transactions_native_address CHECK (((token_kind = 'native'::app.wallet_token_kind) = (token_address IS NULL))),
    CONSTRAINT wallet_transactions_nonce_check CHECK ((nonce >= 0)),
    CONSTRAINT wallet_transactions_out_shape CHECK (((direction = 'in'::app.wallet_transaction_direction) OR ((expires_at IS NOT NULL) AND (log_index IS NULL) AND (gas_limit IS NOT NULL)))),
    CONSTRAINT wallet_transactions_signed CHECK (((status = ANY (ARRAY['pending'::app.wallet_transaction_status, 'expired'::app.wallet_transaction_status])) OR (direction = 'in'::app.wallet_transaction_direction) OR ((hash IS NOT NULL) AND (nonce IS NOT NULL)))),
    CONSTRAINT wallet_transactions_to_address_check CHECK ((to_address ~ '^0x[0-9a-fA-F]{40}$'::text)),
    CONSTRAINT wallet_transactions_token_address_check CHECK ((token_address ~ '^0x[0-9a-fA-F]{40}$'::text)),
    CONSTRAINT wallet_transactions_token_decimals_check CHECK (((token_decimals >= 0) AND (token_decimals <= 77)))
);

--
-- Name: TABLE wallet_transactions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.wallet_transactions IS 'A wallet''s history: transfers out (created pending by the owner, signed and sent on confirm, watched until mined) and transfers in (ERC-20 Transfer logs of known tokens and native value sent to the wallet, indexed from the chain). The token is kept as it was (kind, symbol, name, decimals). Written only by server paths; owners read their own.';

--
-- Name: COLUMN wallet_transactions.log_index; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON COLUMN app.wallet_transactions.log_index IS 'Incoming only: the ERC-20 Transfer log''s index in its block, or -1 for native value (one per transaction).';

--
-- Name: COLUMN wallet_transactions.gas_limit; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON COLUMN app.wallet_transactions.gas_limit IS 'Outgoing only: estimated when the transfer is created; with max_fee_per_gas it is the gas reserved from the native balance until the transfer ends.';

--
-- Name: wallet_transaction_json(app.wallet_transactions); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.wallet_transaction_json(t app.wallet_transactions) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
  return (
    select jsonb_build_object(
      'id', t.id,
      'direction', t.direction,
      'status', case when t.status = 'pending' and t.expires_at <= now() then 'expired' else t.status::text end,
      'token', jsonb_build_object(
        'kind', t.token_kind, 'symbol', t.token_symbol, 'name', t.token_name,
        'decimals', t.token_decimals, 'address', t.token_address, 'chainId', t.chain_id
      ),
      'from', t.from_address,
      'to', t.to_address,
      'toUserId', t.to_user_id,
      'amount', t.amount::text,
      'hash', t.hash,
      'nonce', t.nonce,
      'blockNumber', t.block_number,
      'confirmations', case when t.block_number is null then null
        else greatest(coalesce(app.wallet_chain_head(t.chain_id), t.block_number) - t.block_number + 1, 1) end,
      'fee', t.fee::text,
      'error', t.error,
      'createdAt', to_char(t.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
      'expiresAt', to_char(t.expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
      'confirmedAt', to_char(t.confirmed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
    )
  );
end;
$$;

--
-- Name: FUNCTION wallet_transaction_json(t app.wallet_transactions); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.wallet_transaction_json(t app.wallet_transactions) IS 'A transaction as the API shows it (api-contract.md, Wallet): a pending transfer past its expiry already reads as expired, confirmations are counted against the newest block seen. Runs with the caller''s rights.';

--
-- Name: account_erase_messaging(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.account_erase_messaging(target_user_id uuid) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  g record;
begin
  -- Their messages become tombstones (content emptied by the guard trigger; message.deleted
  -- events go out at commit), their earlier versions go, and their files (the delete trigger
  -- queues each file's removal).
  delete from app.message_versions v
  using app.messages m where m.id = v.message_id and m.sender_id = target_user_id;
  delete from app.attachments a where a.uploader_id = target_user_id;
  update app.messages m set deleted_at = now()
  where m.sender_id = target_user_id and m.deleted_at is null;
  -- A group they created passes to its longest-standing other participant, as when a creator
  -- leaves; a group nobody else is in goes.
  for g in
    select c.id from app.conversations c
    where c.type = 'group'
      and exists (select 1 from app.conversation_participants p
                  where p.conversation_id = c.id and p.user_id = target_user_id)
    for update of c
  loop
    if not exists (select 1 from app.conversation_participants p
                   where p.conversation_id = g.id and p.user_id <> target_user_id) then
      delete from app.conversations c where c.id = g.id;
    else
      update app.conversations c set created_by = (
        select p.user_id from app.conversation_participants p
        where p.conversation_id = g.id and p.user_id <> target_user_id
        order by p.joined_at, p.user_id limit 1
      ) where c.id = g.id and c.created_by = target_user_id;
    end if;
  end loop;
end;
$$;

--
-- Name: FUNCTION account_erase_messaging(target_user_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.account_erase_messaging(target_user_id uuid) IS 'Erasure step `messaging`: the person''s messages become tombstones (their place kept for the others), earlier versions and files go, groups they created pass to the longest-standing other participant and groups left empty are removed. Their memberships go with the user row (cascade).';

--
-- Name: account_erase_store(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.account_erase_store(target_user_id uuid) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  open_checkout uuid;
  vendor app.vendors;
  next_status app.vendor_status;
begin
  for open_checkout in
    select distinct o.checkout_id from app.orders o
    where o.buyer_id = target_user_id and o.status = 'pending_payment'
  loop
    perform app_private.cancel_unpaid_checkout(open_checkout, 'system', null,
                                               'the buyer deleted their account');
  end loop;
  update app.orders o set shipping_address = null
  where o.buyer_id = target_user_id and o.shipping_address is not null
    and o.status in ('delivered', 'completed', 'cancelled', 'refunded');
  for vendor in
    select * from app.vendors v
    where v.owner_id = target_user_id and v.status in ('pending', 'approved')
    order by v.id for update
  loop
    next_status := case when vendor.status = 'pending' then 'rejected' else 'suspended' end;
    insert into app.vendor_decisions (vendor_id, from_status, to_status, reason, decided_by)
    values (vendor.id, vendor.status, next_status, 'the owner deleted their account', null);
    update app.vendors v set status = next_status where v.id = vendor.id;
  end loop;
end;
$$;

--
-- Name: FUNCTION account_erase_store(target_user_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.account_erase_store(target_user_id uuid) IS 'Erasure step `store`: the person''s unpaid checkouts cancelled (stock released), shipping addresses of orders that need no delivery removed, their vendors stopped (pending rejected, approved suspended, recorded in the decisions). Their orders, refunds and settlements stay for the vendors and the accounts, without them (the foreign keys).';

--
-- Name: account_export(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.account_export(target_user_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $_$
declare
  -- Every key of the contract, with the value of a domain that has nothing (or no part yet).
  document jsonb := jsonb_build_object(
    'exportedAt', app_private.iso_time(now()),
    'profile', null, 'identities', '[]'::jsonb, 'sessions', '[]'::jsonb,
    'conversations', '[]'::jsonb, 'messages', '[]'::jsonb, 'notifications', '[]'::jsonb,
    'preferences', null, 'orders', '[]'::jsonb, 'vendor', null, 'wallet', null
  );
  p record;
  value jsonb;
begin
  for p in select e.part, e.function_name from app_private.account_export_parts e order by e.part loop
    execute format('select %s($1)', p.function_name::regproc) using target_user_id into value;
    document := document || jsonb_build_object(p.part, coalesce(value, document -> p.part, 'null'::jsonb));
  end loop;
  return document;
end;
$_$;

--
-- Name: FUNCTION account_export(target_user_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.account_export(target_user_id uuid) IS 'The account export of one user: the contract''s skeleton (every key, empty values) with every part registered in app_private.account_export_parts laid over it.';

--
-- Name: account_export_conversations(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.account_export_conversations(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', c.id, 'type', c.type, 'title', c.title, 'isCreator', c.created_by = target_user_id,
    'createdAt', app_private.iso_time(c.created_at), 'joinedAt', app_private.iso_time(p.joined_at),
    'lastReadMessageId', p.last_read_message_id, 'lastReadAt', app_private.iso_time(p.last_read_at)
  ) order by p.joined_at, c.id), '[]'::jsonb)
  from app.conversation_participants p join app.conversations c on c.id = p.conversation_id
  where p.user_id = target_user_id
$$;

--
-- Name: FUNCTION account_export_conversations(target_user_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.account_export_conversations(target_user_id uuid) IS 'Export part `conversations`: the conversations the person takes part in and how far they read; nothing about the other people in them.';

--
-- Name: account_export_identities(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.account_export_identities(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', i.id, 'provider', i.provider, 'providerUserId', i.provider_user_id, 'email', i.email,
    'createdAt', app_private.iso_time(i.created_at), 'lastUsedAt', app_private.iso_time(i.last_used_at)
  ) order by i.created_at, i.id), '[]'::jsonb)
  from app.identities i where i.user_id = target_user_id
$$;

--
-- Name: FUNCTION account_export_identities(target_user_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.account_export_identities(target_user_id uuid) IS 'Export part `identities`: how the person signs in (provider, the provider''s id for them, the address it gave).';

--
-- Name: account_export_messages(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.account_export_messages(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', m.id, 'conversationId', m.conversation_id, 'content', m.content, 'replyToId', m.reply_to_id,
    'createdAt', app_private.iso_time(m.created_at), 'editedAt', app_private.iso_time(m.edited_at),
    'deletedAt', app_private.iso_time(m.deleted_at),
    'attachments', coalesce((
      select jsonb_agg(jsonb_build_object('id', a.id, 'name', a.name, 'contentType', a.content_type,
                                          'size', a.size, 'url', '/api/attachments/' || a.id::text)
                       order by a.created_at, a.id)
      from app.attachments a where a.message_id = m.id), '[]'::jsonb),
    'earlierVersions', coalesce((
      select jsonb_agg(jsonb_build_object('content', v.content, 'writtenAt', app_private.iso_time(v.written_at),
                                          'replacedAt', app_private.iso_time(v.replaced_at))
                       order by v.replaced_at, v.id)
      from app.message_versions v where v.message_id = m.id), '[]'::jsonb)
  ) order by m.created_at, m.id), '[]'::jsonb)
  from app.messages m where m.sender_id = target_user_id
$$;

--
-- Name: FUNCTION account_export_messages(target_user_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.account_export_messages(target_user_id uuid) IS 'Export part `messages`: every message the person wrote (in conversations they left too), with its files and earlier versions.';

--
-- Name: account_export_notifications(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.account_export_notifications(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', n.id, 'type', n.type, 'title', n.title, 'body', n.body, 'data', n.data,
    'priority', n.priority, 'inbox', n.inbox, 'readAt', app_private.iso_time(n.read_at),
    'createdAt', app_private.iso_time(n.created_at)
  ) order by n.created_at, n.id), '[]'::jsonb)
  from app.notifications n where n.user_id = target_user_id
$$;

--
-- Name: FUNCTION account_export_notifications(target_user_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.account_export_notifications(target_user_id uuid) IS 'Export part `notifications`: every notification of the person, those kept only for delivery (inbox false) included.';

--
-- Name: account_export_orders(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.account_export_orders(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(app.order_json(o) order by o.created_at desc, o.id desc), '[]'::jsonb)
  from app.orders o where o.buyer_id = target_user_id
$$;

--
-- Name: FUNCTION account_export_orders(target_user_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.account_export_orders(target_user_id uuid) IS 'Export part `orders`: every order the person bought, as GET /api/store/orders/:id shows it (items, payment, shipping, history).';

--
-- Name: account_export_preferences(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.account_export_preferences(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'types', coalesce(p.types, '{}'::jsonb),
    'quietHours', case when p.quiet_start is null then null else jsonb_build_object(
      'start', to_char(p.quiet_start, 'HH24:MI'), 'end', to_char(p.quiet_end, 'HH24:MI'),
      'timeZone', p.quiet_time_zone) end,
    'updatedAt', app_private.iso_time(p.updated_at),
    'pushDevices', coalesce((
      select jsonb_agg(jsonb_build_object(
        'id', d.id, 'platform', d.platform, 'deviceName', d.device_name,
        'createdAt', app_private.iso_time(d.created_at), 'updatedAt', app_private.iso_time(d.updated_at)
      ) order by d.created_at, d.id)
      from app.push_devices d where d.user_id = target_user_id), '[]'::jsonb)
  )
  from (select target_user_id as id) me
  left join app.notification_preferences p on p.user_id = me.id
$$;

--
-- Name: FUNCTION account_export_preferences(target_user_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.account_export_preferences(target_user_id uuid) IS 'Export part `preferences`: the notification choices per type and channel, quiet hours, and the push devices registered (platform and name; never the device''s token).';

--
-- Name: account_export_profile(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.account_export_profile(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'id', u.id, 'email', u.email, 'name', u.name, 'image', u.image, 'role', u.role,
    'status', u.status, 'walletAddress', u.wallet_address,
    'createdAt', app_private.iso_time(u.created_at), 'updatedAt', app_private.iso_time(u.updated_at),
    'lastSignInAt', app_private.iso_time(u.last_sign_in_at),
    'roleHistory', coalesce((
      select jsonb_agg(jsonb_build_object(
        'previousRole', rc.previous_role, 'newRole', rc.new_role, 'changedBy', rc.changed_by,
        'reason', rc.reason, 'changedAt', app_private.iso_time(rc.changed_at)) order by rc.changed_at, rc.id)
      from app.role_changes rc where rc.user_id = u.id), '[]'::jsonb),
    'statusHistory', coalesce((
      select jsonb_agg(jsonb_build_object(
        'previousStatus', sc.previous_status, 'newStatus', sc.new_status, 'changedBy', sc.changed_by,
        'reason', sc.reason, 'changedAt', app_private.iso_time(sc.changed_at)) order by sc.changed_at, sc.id)
      from app.status_changes sc where sc.user_id = u.id), '[]'::jsonb)
  )
  from app.users u where u.id = target_user_id
$$;

--
-- Name: FUNCTION account_export_profile(target_user_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.account_export_profile(target_user_id uuid) IS 'Export part `profile`: the user row and its role and status history.';

--
-- Name: account_export_sessions(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.account_export_sessions(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', s.id, 'provider', s.provider, 'ip', host(s.ip), 'userAgent', s.user_agent,
    'createdAt', app_private.iso_time(s.created_at),
    'authenticatedAt', app_private.iso_time(s.authenticated_at),
    'lastSeenAt', app_private.iso_time(greatest(s.created_at, s.refreshed_at)),
    'expiresAt', app_private.iso_time(s.expires_at),
    'revokedAt', app_private.iso_time(s.revoked_at), 'revokedReason', s.revoked_reason
  ) order by s.created_at, s.id), '[]'::jsonb)
  from app.sessions s where s.user_id = target_user_id
$$;

--
-- Name: FUNCTION account_export_sessions(target_user_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.account_export_sessions(target_user_id uuid) IS 'Export part `sessions`: every session still on record (live, ended, expired), never a token or its hash.';

--
-- Name: account_export_vendor(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.account_export_vendor(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select app.vendor_json(v, true) || jsonb_build_object(
    'settlements', coalesce((select jsonb_agg(app.settlement_json(s) order by s.created_at desc, s.id desc)
                             from app.settlements s where s.vendor_id = v.id), '[]'::jsonb))
  from app.vendors v where v.owner_id = target_user_id
  order by (v.status <> 'rejected') desc, v.created_at desc
  limit 1
$$;

--
-- Name: FUNCTION account_export_vendor(target_user_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.account_export_vendor(target_user_id uuid) IS 'Export part `vendor`: the person''s vendor (the live one, else the latest application) as its owner sees it, decisions included, with its settlements; never the payout account''s id.';

--
-- Name: account_export_wallet(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.account_export_wallet(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'id', w.id,
    'address', w.address,
    'createdAt', app_private.iso_time(w.created_at),
    'exportedAt', app_private.iso_time(w.exported_at),
    'addedAssets', coalesce((
      select jsonb_agg(jsonb_build_object('chainId', c.chain_id, 'address', c.address,
                                          'symbol', c.symbol, 'name', c.name, 'decimals', c.decimals)
                       order by t.created_at, t.id)
      from app.wallet_tokens t
      join app.chain_tokens c on c.chain_id = t.chain_id and c.address = t.address
      where t.user_id = target_user_id), '[]'::jsonb),
    'transactions', coalesce((
      select jsonb_agg(jsonb_build_object(
               'id', x.id, 'direction', x.direction, 'status', j ->> 'status',
               'asset', j -> 'token', 'from', x.from_address, 'to', x.to_address,
               'amount', x.amount::text, 'txid', x.hash, 'blockNumber', x.block_number,
               'fee', x.fee::text, 'error', x.error,
               'createdAt', app_private.iso_time(x.created_at),
               'confirmedAt', app_private.iso_time(x.confirmed_at))
             order by x.created_at, x.id)
      from app.wallet_transactions x, app.wallet_transaction_json(x) j
      where x.user_id = target_user_id), '[]'::jsonb),
    'nfts', coalesce((
      select jsonb_agg(jsonb_build_object('chainId', n.chain_id, 'contract', n.contract,
                                          'id', n.token_id::text, 'standard', n.standard,
                                          'balance', n.balance::text, 'name', n.name)
                       order by n.created_at, n.contract, n.token_id)
      from app.wallet_nfts n where n.user_id = target_user_id), '[]'::jsonb)
  )
  from app.wallets w where w.user_id = target_user_id
$$;

--
-- Name: FUNCTION account_export_wallet(target_user_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.account_export_wallet(target_user_id uuid) IS 'Export part `wallet`: the wallet''s public data (address, when it was created and last exported), the ERC-20s added, every transaction (its token as `asset`, its hash as `txid`: the export''s keys never look like secrets) and the NFTs held; null without a wallet. Never key material: the sealed key stays in app_private.wallet_keys (the key itself leaves only through POST /api/wallet/export).';

--
-- Name: after_order_change(app.orders, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.after_order_change(target app.orders, event text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  last app.order_history;
  owner uuid;
  amount text := to_char(target.total / 100.0, 'FM999999999990.00') || ' ' || target.currency;
  ref text := left(target.id::text, 8);
  data jsonb := jsonb_build_object('kind', event, 'orderId', target.id, 'checkoutId', target.checkout_id,
                                   'vendorId', target.vendor_id, 'status', target.status);
  title text;
  body text;
begin
  select * into last from app.order_history h where h.order_id = target.id order by h.id desc limit 1;
  select v.owner_id into owner from app.vendors v where v.id = target.vendor_id;

  -- The buyer.
  title := null;
  if event = 'order.status_changed' and target.buyer_id is distinct from last.actor_id then
    case target.status
      when 'paid' then
        title := 'Payment received';
        body := format('Your order %s from %s is paid (%s).', ref, target.vendor_name, amount);
      when 'shipped' then
        title := 'Your order has shipped';
        body := format('%s shipped your order %s%s%s.', target.vendor_name, ref,
                       coalesce(' with ' || target.carrier, ''),
                       coalesce(', tracking number ' || target.tracking_number, ''));
      when 'delivered' then
        title := 'Your order was delivered';
        body := format('Your order %s from %s was delivered.', ref, target.vendor_name);
      when 'cancelled' then
        title := 'Your order was cancelled';
        body := format('Your order %s from %s was cancelled%s.', ref, target.vendor_name,
                       coalesce(': ' || last.reason, ''))
                || case when target.payment_status = 'refunded' then ' Your payment will be refunded.' else '' end;
      when 'refunded' then
        title := 'Your order was refunded';
        body := format('Your order %s from %s was refunded (%s).', ref, target.vendor_name, amount);
      else
        title := null;
    end case;
  elsif event = 'order.payment_failed' then
    title := 'Your payment failed';
    body := format('The payment for your order %s from %s failed. You can pay again until the reservation ends.',
                   ref, target.vendor_name);
  elsif event = 'order.refund_succeeded' then
    title := 'Your refund was issued';
    body := format('%s for your order %s from %s is on its way back to you.', amount, ref, target.vendor_name);
  end if;
  if title is not null and target.buyer_id is not null then
    perform app_private.notify(target.buyer_id, 'SYSTEM', title, body, data, 'normal',
      case when event = 'order.payment_failed' then 'checkout-payment:' || target.checkout_id end);
  end if;

  -- The vendor's owner.
  title := null;
  if event = 'order.status_changed' and owner is not null and owner is distinct from last.actor_id then
    if target.status = 'paid' then
      title := 'New order to fulfil';
      body := format('Order %s (%s) is paid and waits for you.', ref, amount);
    elsif target.status = 'cancelled' and last.from_status in ('paid', 'processing') then
      title := 'An order was cancelled';
      body := format('Order %s (%s) was cancelled%s; the buyer is refunded.', ref, amount,
                     coalesce(': ' || last.reason, ''));
    elsif target.status = 'refunded' then
      title := 'An order was refunded';
      body := format('Order %s (%s) was refunded; it is deducted from your next settlement.', ref, amount);
    elsif target.status = 'completed' then
      title := 'An order was completed';
      body := format('Order %s (%s) is complete.', ref, amount);
    end if;
  end if;
  if title is not null then
    perform app_private.notify(owner, 'SYSTEM', title, body, data);
  end if;
end;
$$;

--
-- Name: FUNCTION after_order_change(target app.orders, event text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.after_order_change(target app.orders, event text) IS 'The SYSTEM notifications of an order change (data: kind, orderId, checkoutId, vendorId, status), through app_private.notify: the buyer on payment, shipping, delivery, cancellation, refund, a failed payment (one per checkout, collapsed) and an issued refund; the vendor''s owner on a paid order to fulfil and a paid order cancelled, refunded or completed. Whoever made the move is not told of it.';

--
-- Name: after_vendor_change(app.vendors, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.after_vendor_change(vendor app.vendors, decision_reason text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  title text;
begin
  if vendor.owner_id is null or vendor.owner_id = auth.uid() then
    return;
  end if;
  title := case vendor.status
    when 'approved' then format('%s can sell', vendor.name)
    when 'rejected' then format('%s was not approved', vendor.name)
    when 'suspended' then format('%s is suspended', vendor.name)
    else format('%s was reviewed', vendor.name)
  end;
  perform app_private.notify(
    vendor.owner_id, 'SYSTEM', title, left(decision_reason, 2000),
    jsonb_build_object('kind', 'vendor.status_changed', 'vendorId', vendor.id, 'status', vendor.status,
                       'commissionBps', vendor.commission_bps),
    case when vendor.status = 'suspended' then 'high' else 'normal' end::app.notification_priority
  );
end;
$$;

--
-- Name: FUNCTION after_vendor_change(vendor app.vendors, decision_reason text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.after_vendor_change(vendor app.vendors, decision_reason text) IS 'The owner''s SYSTEM notification of an ADMIN''s decision on their vendor (data: kind vendor.status_changed, vendorId, status, commissionBps), with the decision''s reason as its body; a suspension is high priority.';

--
-- Name: allocate_wallet_nonce(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.allocate_wallet_nonce(wallet uuid) RETURNS bigint
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update app_private.wallet_nonces n set next_nonce = n.next_nonce + 1, updated_at = now()
  where n.wallet_id = wallet
  returning n.next_nonce - 1
$$;

--
-- Name: FUNCTION allocate_wallet_nonce(wallet uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.allocate_wallet_nonce(wallet uuid) IS 'Takes the wallet''s next nonce and moves the counter on, holding the row lock until commit: distinct, gapless nonces for concurrent confirms (a rolled-back confirm gives its number back). Server path only.';

--
-- Name: announce_batch_chunk(uuid, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.announce_batch_chunk(target_batch_id uuid, target_chunk integer) RETURNS uuid[]
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  c app_private.notification_batch_chunks;
begin
  update app_private.notification_batch_chunks x set announced_at = now()
  where x.batch_id = target_batch_id and x.chunk = target_chunk and x.announced_at is null
  returning * into c;
  if found then
    perform app_private.emit_event('user:' || n.user_id, 'notification.created', app.notification_json(n))
    from app.notifications n
    where n.batch_id = target_batch_id and n.user_id between c.first_user_id and c.last_user_id and n.inbox;
  else
    select * into c from app_private.notification_batch_chunks x
    where x.batch_id = target_batch_id and x.chunk = target_chunk;
    if not found then
      raise exception 'chunk not found' using errcode = 'AG404';
    end if;
  end if;
  return array(
    select distinct d.notification_id
    from app.notifications n join app_private.notification_deliveries d on d.notification_id = n.id
    where n.batch_id = target_batch_id and n.user_id between c.first_user_id and c.last_user_id
      and d.status = 'queued'
  );
end;
$$;

--
-- Name: FUNCTION announce_batch_chunk(target_batch_id uuid, target_chunk integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.announce_batch_chunk(target_batch_id uuid, target_chunk integer) IS 'A batch chunk''s live events: notification.created on each recipient''s user:<id>, once (announced_at, set in the same transaction), whatever the job''s retries. Returns the chunk''s notifications that still have queued deliveries. security definer: emit_event on other users'' topics.';

--
-- Name: announce_wallet(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.announce_wallet() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  perform pg_notify('agora_wallets', new.address);
  return null;
end;
$$;

--
-- Name: FUNCTION announce_wallet(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.announce_wallet() IS 'NOTIFY agora_wallets with a new wallet''s address at commit: the local stack funds new wallets on its development chain (stack/chain/local.ts); nothing listens hosted.';

--
-- Name: apply_payment_intent(text, text, bigint, text, boolean); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.apply_payment_intent(intent_id text, intent_status text, intent_amount bigint, intent_currency text, attempt_failed boolean DEFAULT false) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  checkout app.checkouts;
  ids uuid[];
  target app.orders;
  outcome text := 'paid';
begin
  select * into checkout from app.checkouts c where c.payment_intent_id = intent_id for update;
  if not found then
    return 'unknown';
  end if;

  if intent_status = 'succeeded' then
    if intent_amount <> checkout.total or upper(intent_currency) <> checkout.currency then
      return 'mismatch';
    end if;
    if checkout.payment_status = 'succeeded' then
      outcome := 'already_paid';
    end if;
    update app.checkouts c set payment_status = 'succeeded' where c.id = checkout.id;
    select array_agg(o.id order by o.id) into ids from app.orders o where o.checkout_id = checkout.id;
    perform 1 from app.orders o where o.id = any(ids) order by o.id for update;
    perform app_private.lock_order_products(ids);
    for target in select * from app.orders o where o.id = any(ids) order by o.id loop
      if target.status = 'pending_payment' then
        perform app_private.move_order(target, 'paid', 'system', null, 'payment succeeded');
      elsif target.status = 'cancelled' and target.payment_status in ('pending', 'failed') then
        -- Paid after it was cancelled (the reservation expired first): the money goes back.
        update app.orders o set payment_status = 'refunded' where o.id = target.id
        returning * into target;
        perform app_private.request_refund(target, 'paid after the order was cancelled', null);
        perform app_private.emit_order_event(target, 'order.status_changed');
      end if;
    end loop;
    perform app_private.close_checkout_if_settled(checkout.id);
    return outcome;
  end if;

  if intent_status = 'requires_payment_method' and attempt_failed
     and checkout.payment_status in ('pending', 'failed') then
    update app.checkouts c set payment_status = 'failed' where c.id = checkout.id;
    for target in
      update app.orders o set payment_status = 'failed'
      where o.checkout_id = checkout.id and o.status = 'pending_payment'
      returning *
    loop
      perform app_private.after_order_change(target, 'order.payment_failed');
    end loop;
    return 'failed';
  end if;
  return 'ignored';
end;
$$;

--
-- Name: FUNCTION apply_payment_intent(intent_id text, intent_status text, intent_amount bigint, intent_currency text, attempt_failed boolean); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.apply_payment_intent(intent_id text, intent_status text, intent_amount bigint, intent_currency text, attempt_failed boolean) IS 'What a PaymentIntent''s current state (read from the provider by the store.stripe_event job, never taken from the event) does to its checkout: success pays the unpaid orders (system actor) if amount and currency match, and refunds orders cancelled before the money came; a failed attempt marks the payment failed (payable again until the reservation expires). Idempotent: the same state twice changes nothing, so replayed and out-of-order events are harmless.';

--
-- Name: apply_payout_account(text, app.payouts_status); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.apply_payout_account(account text, new_status app.payouts_status) RETURNS uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  vendor app.vendors;
  released_count integer;
begin
  update app.vendors v set payouts_status = new_status
  where v.payout_account_id = account
  returning * into vendor;
  if not found then
    return null;
  end if;
  if new_status = 'active' then
    -- No dedupe key: the settlement's earlier job (which held it) is done; the job itself is
    -- idempotent (it pays only pending settlements, with the key settlement:<id> at the provider).
    with released as (
      update app.settlements s set status = 'pending', failure_reason = null
      where s.vendor_id = vendor.id and s.status = 'held' and s.net > 0 and s.carried_into is null
      returning s.id
    )
    select count(app_private.enqueue_job('store.payout', jsonb_build_object('settlementId', r.id)))
    into released_count
    from released r;
  end if;
  return vendor.id;
end;
$$;

--
-- Name: FUNCTION apply_payout_account(account text, new_status app.payouts_status); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.apply_payout_account(account text, new_status app.payouts_status) IS 'Keeps a vendor''s payouts status from its Connect account (account.updated webhooks, the account re-read from the provider); when the account becomes active, the vendor''s held settlements with a positive net become pending and get store.payout jobs. Returns the vendor''s id (null for an unknown account).';

--
-- Name: assign_message_seq(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.assign_message_seq() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- A nested `if`: as one condition the planner folded the known null and made a custom plan on
  -- every insert.
  if new.reply_to_id is not null then
    if not exists (
      select 1 from app.messages m where m.id = new.reply_to_id and m.conversation_id = new.conversation_id
    ) then
      raise exception 'a reply must point to a message of the same conversation' using errcode = 'AG422';
    end if;
  end if;
  update app.conversations c set last_seq = c.last_seq + 1, last_activity_at = now()
  where c.id = new.conversation_id
  returning c.last_seq into new.seq;
  if new.seq is null then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  return new;
end;
$$;

--
-- Name: FUNCTION assign_message_seq(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.assign_message_seq() IS 'A new message takes the next seq from its conversation; the update holds the conversation row''s lock until commit, so seq order is commit order within the conversation. Also checks a reply points into the same conversation.';

--
-- Name: cancel_unpaid_checkout(uuid, app.order_actor, uuid, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.cancel_unpaid_checkout(target_checkout_id uuid, by_actor app.order_actor, by_user uuid, cancel_reason text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  pending app.orders;
  ids uuid[];
begin
  perform 1 from app.checkouts c where c.id = target_checkout_id for update;
  select array_agg(o.id order by o.id) into ids from app.orders o
  where o.checkout_id = target_checkout_id and o.status = 'pending_payment';
  if ids is null then
    return;
  end if;
  perform 1 from app.orders o where o.id = any(ids) order by o.id for update;
  perform app_private.lock_order_products(ids);
  for pending in
    select * from app.orders o where o.id = any(ids) and o.status = 'pending_payment' order by o.id
  loop
    perform app_private.move_order(pending, 'cancelled', by_actor, by_user, cancel_reason);
  end loop;
  perform app_private.close_checkout_if_settled(target_checkout_id);
end;
$$;

--
-- Name: FUNCTION cancel_unpaid_checkout(target_checkout_id uuid, by_actor app.order_actor, by_user uuid, cancel_reason text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.cancel_unpaid_checkout(target_checkout_id uuid, by_actor app.order_actor, by_user uuid, cancel_reason text) IS 'Cancels all orders of a checkout that await payment, releasing their reservations: one PaymentIntent pays the whole checkout, so an unpaid checkout is cancelled whole (by its buyer, an ADMIN or the expiry). Locks the checkout, then its orders, then their products, in that order.';

--
-- Name: checkout_json(uuid, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.checkout_json(target_checkout_id uuid, client_secret text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
  return (
    select jsonb_build_object('checkout', jsonb_build_object(
      'id', c.id,
      'total', jsonb_build_object('amount', c.total, 'currency', c.currency),
      'reservedUntil', to_char(c.reserved_until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'orders', coalesce((select jsonb_agg(app.order_json(o) order by o.vendor_name, o.id)
                          from app.orders o where o.checkout_id = c.id), '[]'::jsonb),
      'payment', jsonb_build_object(
        'provider', c.provider,
        'paymentIntentId', c.payment_intent_id,
        'clientSecret', client_secret,
        'status', c.payment_status
      )
    ))
    from app.checkouts c where c.id = target_checkout_id
  );
end;
$$;

--
-- Name: FUNCTION checkout_json(target_checkout_id uuid, client_secret text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.checkout_json(target_checkout_id uuid, client_secret text) IS 'The answer of POST /api/store/orders: { checkout: { id, total, reservedUntil, orders, payment: { provider, paymentIntentId, clientSecret, status } } }.';

--
-- Name: jobs; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.jobs (
    id bigint NOT NULL,
    kind text NOT NULL,
    payload jsonb DEFAULT '{}'::jsonb NOT NULL,
    state app_private.job_state DEFAULT 'queued'::app_private.job_state NOT NULL,
    run_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 10 NOT NULL,
    last_error text,
    dedupe_key text,
    claim_token uuid,
    claimed_by text,
    locked_until timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    CONSTRAINT jobs_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT jobs_claim_held CHECK (((state = 'running'::app_private.job_state) = ((claim_token IS NOT NULL) AND (locked_until IS NOT NULL)))),
    CONSTRAINT jobs_dedupe_key_check CHECK (((length(dedupe_key) >= 1) AND (length(dedupe_key) <= 300))),
    CONSTRAINT jobs_finished CHECK (((state = ANY (ARRAY['done'::app_private.job_state, 'dead'::app_private.job_state])) = (finished_at IS NOT NULL))),
    CONSTRAINT jobs_kind_check CHECK ((kind ~ '^[a-z][a-z0-9_.:-]{0,99}$'::text)),
    CONSTRAINT jobs_max_attempts_check CHECK (((max_attempts >= 1) AND (max_attempts <= 100))),
    CONSTRAINT jobs_payload_check CHECK ((jsonb_typeof(payload) = 'object'::text))
);

--
-- Name: TABLE jobs; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.jobs IS 'The one job queue: work that calls the outside world, run by the api function''s drain (or the local stack''s worker). Server only: RLS on, no policies, no grants to API roles.';

--
-- Name: COLUMN jobs.kind; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.kind IS 'Which handler runs it (functions/api/jobs/registry.ts), e.g. storage.delete.';

--
-- Name: COLUMN jobs.payload; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.payload IS 'The handler''s input, a JSON object. Never secrets: operators read this table.';

--
-- Name: COLUMN jobs.run_at; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.run_at IS 'Not before this time: the enqueue time, or when the next retry is due.';

--
-- Name: COLUMN jobs.attempts; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.attempts IS 'Claims so far, the current one included.';

--
-- Name: COLUMN jobs.dedupe_key; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.dedupe_key IS 'Optional: enqueueing the same key again returns the existing job (until it is pruned).';

--
-- Name: COLUMN jobs.claim_token; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.claim_token IS 'Set by each claim; complete and fail must present it (a stale worker cannot).';

--
-- Name: COLUMN jobs.locked_until; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.locked_until IS 'The lease: past it, a running job is claimable again (its worker is presumed gone).';

--
-- Name: claim_jobs(text[], text, integer, interval); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.claim_jobs(kinds text[], worker text, batch integer DEFAULT 10, lease interval DEFAULT '00:01:00'::interval) RETURNS SETOF app_private.jobs
    LANGUAGE plpgsql
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  if batch is null or batch < 1 or batch > 1000 then
    raise exception 'batch must be between 1 and 1000' using errcode = '22023';
  end if;
  if lease is null or lease <= interval '0' then
    raise exception 'lease must be positive' using errcode = '22023';
  end if;

  update app_private.jobs j
  set state = 'dead', finished_at = now(), claim_token = null, locked_until = null,
      last_error = 'the lease ran out on the last attempt (the worker stopped or timed out)'
  where j.id in (
    select x.id from app_private.jobs x
    where x.state = 'running' and x.locked_until < now() and x.attempts >= x.max_attempts
      and x.kind = any(kinds)
    for update skip locked
  );

  return query
  update app_private.jobs j
  set state = 'running', attempts = j.attempts + 1, claim_token = gen_random_uuid(),
      claimed_by = worker, locked_until = now() + lease, started_at = now()
  where j.id in (
    select x.id from app_private.jobs x
    where x.state in ('queued', 'running') and x.run_at <= now() and x.kind = any(kinds)
      and (x.state = 'queued' or (x.locked_until < now() and x.attempts < x.max_attempts))
    order by x.run_at, x.id
    limit batch
    for update skip locked
  )
  returning j.*;
end;
$$;

--
-- Name: FUNCTION claim_jobs(kinds text[], worker text, batch integer, lease interval); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.claim_jobs(kinds text[], worker text, batch integer, lease interval) IS 'Claims up to batch due jobs of the given kinds (queued and due, or running with an expired lease) with for update skip locked; each gets attempts + 1, a new claim_token and a lease. Dead-letters jobs whose lease expired on their last attempt.';

--
-- Name: claim_message_digest(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.claim_message_digest(target_conversation_id uuid) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  upto_seq bigint;
begin
  -- Senders hold the conversation row until they commit: once this lock is granted, every
  -- message numbered so far is committed. New senders wait for this short transaction, then mark
  -- the conversation again.
  select c.last_seq into upto_seq from app.conversations c
  where c.id = target_conversation_id for share;
  delete from app_private.message_digests_pending x where x.conversation_id = target_conversation_id;
  return upto_seq;
end;
$$;

--
-- Name: FUNCTION claim_message_digest(target_conversation_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.claim_message_digest(target_conversation_id uuid) IS 'First half of the notifications.digest job: waits for the conversation''s senders in flight (its row, which each holds for its seq until commit), takes the conversation''s mark away and returns the last message seq, all committed by then. A transaction of its own, so senders wait for it only briefly. Null for a conversation that is gone. security definer: the marks are server-only.';

--
-- Name: close_checkout_if_settled(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.close_checkout_if_settled(target_checkout_id uuid) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  checkout app.checkouts;
begin
  select * into checkout from app.checkouts c where c.id = target_checkout_id;
  if checkout.closed_at is not null or exists (
    select 1 from app.orders o where o.checkout_id = target_checkout_id and o.status = 'pending_payment'
  ) then
    return;
  end if;
  update app.checkouts c set closed_at = now() where c.id = target_checkout_id;
  if checkout.payment_status <> 'succeeded' and checkout.payment_intent_id is not null then
    perform app_private.enqueue_job('store.payment_intent_cancel',
      jsonb_build_object('checkoutId', target_checkout_id), now(), 'pi-cancel:' || target_checkout_id);
  end if;
end;
$$;

--
-- Name: FUNCTION close_checkout_if_settled(target_checkout_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.close_checkout_if_settled(target_checkout_id uuid) IS 'Marks a checkout closed once no order of it awaits payment (so expiry no longer looks at it) and, when it was never paid, queues the cancellation of its PaymentIntent (store.payment_intent_cancel), so a late payment attempt fails at the provider instead of charging for cancelled orders.';

--
-- Name: collect_orphan_attachments(interval); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.collect_orphan_attachments(older_than interval DEFAULT '24:00:00'::interval) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from app.attachments where message_id is null and created_at < now() - older_than
$$;

--
-- Name: FUNCTION collect_orphan_attachments(older_than interval); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.collect_orphan_attachments(older_than interval) IS 'Uploads never attached within older_than are dropped (their files queued by the delete trigger). Run hourly by pg_cron.';

--
-- Name: complete_delivered_orders(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.complete_delivered_orders() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  due app.orders;
  n integer := 0;
begin
  for due in
    select o.* from app.orders o
    where o.status = 'delivered'
      and o.delivered_at < now() - make_interval(days => app.config_int('store', 'autoCompleteDays'))
    order by o.delivered_at
    for update skip locked
  loop
    perform app_private.move_order(due, 'completed', 'system', null,
                                   'completed automatically after delivery');
    n := n + 1;
  end loop;
  return n;
end;
$$;

--
-- Name: FUNCTION complete_delivered_orders(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.complete_delivered_orders() IS 'Completes orders delivered more than store.autoCompleteDays ago (actor system). Run hourly by pg_cron.';

--
-- Name: complete_job(bigint, uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.complete_job(job_id bigint, token uuid) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  update app_private.jobs j
  set state = 'done', finished_at = now(), claim_token = null, locked_until = null
  where j.id = job_id and j.state = 'running' and j.claim_token = token;
  return found;
end;
$$;

--
-- Name: FUNCTION complete_job(job_id bigint, token uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.complete_job(job_id bigint, token uuid) IS 'Records success of a claimed job (its claim_token must match); false if the lease was lost.';

--
-- Name: config_defaults(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.config_defaults() RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  select '{
    "system": {
      "platformName": "Agora", "defaultRole": "SUBSCRIBER", "maintenanceMode": false,
      "signupsOpen": true
    },
    "features": {
      "messaging": true, "store": true, "wallet": true, "notifications": true,
      "signIn": { "email": true, "google": true, "apple": true, "wallet": true }
    },
    "security": { "freshSignInSeconds": 600 },
    "limits": {
      "messageMaxLength": 10000, "messageEditWindowMinutes": 15,
      "attachmentMaxBytes": 10485760, "groupMaxParticipants": 100
    },
    "whiteLabel": {
      "brandName": "Agora", "logoUrl": null, "primaryColor": "#1f6feb", "customDomain": null,
      "supportEmail": null
    },
    "store": {
      "currency": "USD", "commissionBps": 500, "reservationMinutes": 15, "autoCompleteDays": 14,
      "settlementHourUtc": 1
    },
    "wallet": {
      "chainId": 31337, "confirmations": 1, "pendingTtlSeconds": 600, "exportsPerDay": 3,
      "contracts": {
        "multicall3": null, "utility": null, "governance": null, "staking": null,
        "erc721": [], "erc1155": []
      }
    },
    "notifications": {
      "bulkMaxRecipients": 1000000,
      "defaults": {
        "OPPORTUNITY": { "inApp": true, "push": true, "email": false },
        "MESSAGE": { "inApp": true, "push": true, "email": false },
        "ENTITY": { "inApp": true, "push": true, "email": false },
        "SYSTEM": { "inApp": true, "push": true, "email": true },
        "WALLET": { "inApp": true, "push": true, "email": false }
      }
    }
  }'::jsonb
$$;

--
-- Name: FUNCTION config_defaults(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.config_defaults() IS 'The default of every configuration setting, and the only place defaults are written: the database enforces limits and runs scheduled work without the API, so it must know them; the API reads the effective document (app.effective_config) and only validates shapes. A new setting is a new version of this function.';

--
-- Name: conversation_notifications(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.conversation_notifications() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  joined record;
  adder_name text;
begin
  for joined in
    select a.conversation_id, a.added_by, c.type, c.title,
           array_agg(a.user_id) filter (where a.user_id is distinct from a.added_by) as users
    from added a join app.conversations c on c.id = a.conversation_id
    group by a.conversation_id, a.added_by, c.type, c.title
  loop
    continue when joined.users is null;
    select coalesce(nullif(u.name, ''), 'Someone') into adder_name from app.users u where u.id = joined.added_by;
    adder_name := coalesce(adder_name, 'Someone');
    perform app_private.notify_many(
      joined.users,
      'MESSAGE',
      left(coalesce(joined.title, adder_name), 200),
      case when joined.type = 'group' then adder_name || ' added you to ' || joined.title
           else adder_name || ' started a conversation with you' end,
      jsonb_build_object('conversationId', joined.conversation_id, 'messageId', null, 'count', 0),
      'normal',
      'conversation:' || joined.conversation_id::text
    );
  end loop;
  return null;
end;
$$;

--
-- Name: FUNCTION conversation_notifications(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.conversation_notifications() IS 'A new conversation (or being added to a group) gives each person added, but not the one who added them, a MESSAGE notification under the conversation''s collapse key, with count 0: the first message then makes it 1. A statement trigger: one call per conversation however many people join. security definer: it writes other users'' inboxes through app_private.notify_many.';

--
-- Name: conversation_read_notifications(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.conversation_read_notifications() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  update app.notifications n set read_at = now()
  where n.user_id = new.user_id
    and n.collapse_key = 'conversation:' || new.conversation_id::text
    and n.read_at is null
    and coalesce(
      (select m.seq from app.messages m
        where m.id = (n.data ->> 'messageId')::uuid and m.conversation_id = new.conversation_id),
      0) <= new.last_read_seq;
  return null;
end;
$$;

--
-- Name: FUNCTION conversation_read_notifications(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.conversation_read_notifications() IS 'Reading a conversation up to the latest message its MESSAGE notification tells of marks that notification read (and notification.read goes out); a read mark short of it leaves it unread. security definer: notifications are updated by their owner only through RLS, and this runs on the participant row''s update.';

--
-- Name: correct_spelling(text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.correct_spelling(search text) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $_$
declare
  term text;
  best text;
  corrected text[] := '{}';
  changed boolean := false;
  allowed integer;
begin
  for term in
    select w from regexp_split_to_table(lower(search), '[^[:alnum:]]+') as w where w <> ''
  loop
    best := null;
    if char_length(term) between 3 and 40 and term ~ '^[[:alpha:]]+$'
       and not exists (select 1 from app_private.catalog_words c where c.word = term) then
      allowed := case when char_length(term) <= 3 then 1 else 2 end;
      select c.word into best
      from app_private.catalog_words c
      where char_length(c.word) between char_length(term) - allowed
                                   and char_length(term) + allowed
        and extensions.levenshtein_less_equal(c.word, term, allowed) <= allowed
      order by extensions.levenshtein(c.word, term),
               extensions.similarity(c.word, term) desc, c.word
      limit 1;
    end if;
    if best is null then
      corrected := corrected || term;
    else
      corrected := corrected || best;
      changed := true;
    end if;
  end loop;
  return case when changed then array_to_string(corrected, ' ') end;
end;
$_$;

--
-- Name: FUNCTION correct_spelling(search text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.correct_spelling(search text) IS 'The search with each word the catalog''s vocabulary does not know replaced by its nearest vocabulary word (Levenshtein distance at most 1 for 3 letters, 2 for longer; then trigram similarity), or null when no word changed: the typo fallback of app.search_products.';

--
-- Name: count_catalog(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.count_catalog() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if tg_op = 'INSERT' then
    insert into app_private.catalog_counts as c (vendor_id, category, in_stock, products)
    select n.vendor_id, n.category, n.stock > n.reserved, count(*)::integer
    from new_rows n where n.status = 'active'
    group by 1, 2, 3 order by 1, 2, 3
    on conflict (vendor_id, category, in_stock) do update set products = c.products + excluded.products;
  elsif tg_op = 'DELETE' then
    update app_private.catalog_counts c set products = c.products - d.n
    from (select o.vendor_id, o.category, o.stock > o.reserved as in_stock, count(*)::integer as n
          from old_rows o where o.status = 'active' group by 1, 2, 3) d
    where c.vendor_id = d.vendor_id and c.category = d.category and c.in_stock = d.in_stock;
  else
    insert into app_private.catalog_counts as c (vendor_id, category, in_stock, products)
    select x.vendor_id, x.category, x.in_stock, sum(x.n)::integer
    from (
      select n.vendor_id, n.category, n.stock > n.reserved as in_stock, 1 as n
      from new_rows n where n.status = 'active'
      union all
      select o.vendor_id, o.category, o.stock > o.reserved, -1
      from old_rows o where o.status = 'active'
    ) x
    group by 1, 2, 3 having sum(x.n) <> 0 order by 1, 2, 3
    on conflict (vendor_id, category, in_stock) do update set products = c.products + excluded.products;
  end if;
  return null;
end;
$$;

--
-- Name: FUNCTION count_catalog(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.count_catalog() IS 'Keeps app_private.catalog_counts: the net change of each statement on app.products (inserts, updates that move a product between vendor, category, status or availability, deletes), applied in key order. security definer: vendors write products, but not the server-only counts.';

--
-- Name: count_new_notifications(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.count_new_notifications() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into app.notification_counters as c (user_id, unread)
  select a.user_id, count(*)::integer from added a
  where a.inbox and a.read_at is null
  group by a.user_id
  order by a.user_id
  on conflict (user_id) do update set unread = c.unread + excluded.unread;
  return null;
end;
$$;

--
-- Name: FUNCTION count_new_notifications(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.count_new_notifications() IS 'Adds a statement''s new unread inbox rows to each recipient''s counter: one statement per insert statement, whatever its size (a bulk batch of 100,000 is one upsert; a message folding into unread notifications inserts nothing and adds nothing). Counters are taken in user order, so concurrent inserts never deadlock on them. security definer: the counters are written by the server only.';

--
-- Name: create_checkout_as(text, jsonb, jsonb, text, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.create_checkout_as(claims text, requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  perform set_config('request.jwt.claims', claims, true);
  perform set_config('role', 'authenticated', true);
  return app.create_checkout(requested_items, shipping_address, idempotency_key, request_hash,
                             payment_provider);
end;
$$;

--
-- Name: FUNCTION create_checkout_as(claims text, requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.create_checkout_as(claims text, requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) IS 'A checkout in one statement, for the API''s hot path: sets the caller''s role and claims for this statement''s own transaction and runs app.create_checkout as the caller, so the commit follows at once on the server and the products'' row locks are never held across a round trip. Only the API''s own role may call it: it trusts the claims it is given.';

--
-- Name: create_wallet_transfer(uuid, integer, app.wallet_token_kind, text, text, text, integer, text, uuid, numeric, numeric, numeric, numeric, numeric); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.create_wallet_transfer(owner uuid, chain integer, kind app.wallet_token_kind, token text, symbol text, token_full_name text, decimals integer, recipient text, recipient_user uuid, transfer_amount numeric, transfer_gas_limit numeric, transfer_max_fee numeric, token_balance numeric, native_balance numeric) RETURNS app.wallet_transactions
    LANGUAGE plpgsql
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  w app.wallets;
  token_reserved numeric;
  native_reserved numeric;
  gas_reserved numeric;
  gas numeric := transfer_gas_limit * transfer_max_fee;
  created app.wallet_transactions;
begin
  select * into w from app.wallets where user_id = owner for update;
  if not found then
    raise exception 'you have no wallet yet (POST /api/wallet/create)' using errcode = 'AG404';
  end if;
  select
    coalesce(sum(t.amount) filter (where t.token_address is not distinct from token), 0),
    coalesce(sum(t.amount) filter (where t.token_kind = 'native'), 0),
    coalesce(sum(t.gas_limit * t.max_fee_per_gas), 0)
  into token_reserved, native_reserved, gas_reserved
  from app.wallet_transactions t
  where t.wallet_id = w.id and t.direction = 'out'
    and (t.status = 'submitted' or (t.status = 'pending' and t.expires_at > now()));
  if kind = 'native' then
    if transfer_amount + gas + native_reserved + gas_reserved > native_balance then
      raise exception 'the balance less pending transfers and gas does not cover this amount'
        using errcode = 'AG422', hint = 'insufficient_funds',
        detail = jsonb_build_object('token', 'native', 'balance', native_balance::text,
          'reserved', (native_reserved + gas_reserved)::text, 'amount', transfer_amount::text, 'gas', gas::text)::text;
    end if;
  else
    if transfer_amount + token_reserved > token_balance then
      raise exception 'the balance less pending transfers does not cover this amount'
        using errcode = 'AG422', hint = 'insufficient_funds',
        detail = jsonb_build_object('token', token, 'balance', token_balance::text,
          'reserved', token_reserved::text, 'amount', transfer_amount::text)::text;
    end if;
    if gas + native_reserved + gas_reserved > native_balance then
      raise exception 'the native balance does not cover the gas of this transfer'
        using errcode = 'AG422', hint = 'insufficient_funds',
        detail = jsonb_build_object('token', 'native', 'balance', native_balance::text,
          'reserved', (native_reserved + gas_reserved)::text, 'gas', gas::text)::text;
    end if;
  end if;
  insert into app.wallet_transactions (
    wallet_id, user_id, direction, status, chain_id, token_kind, token_address, token_symbol,
    token_name, token_decimals, from_address, to_address, to_user_id, amount, gas_limit,
    max_fee_per_gas, expires_at
  ) values (
    w.id, owner, 'out', 'pending', chain, kind, token, symbol, token_full_name, decimals,
    w.address, recipient, recipient_user, transfer_amount, transfer_gas_limit, transfer_max_fee,
    now() + make_interval(secs => app.config_int('wallet', 'pendingTtlSeconds'))
  ) returning * into created;
  return created;
end;
$$;

--
-- Name: FUNCTION create_wallet_transfer(owner uuid, chain integer, kind app.wallet_token_kind, token text, symbol text, token_full_name text, decimals integer, recipient text, recipient_user uuid, transfer_amount numeric, transfer_gas_limit numeric, transfer_max_fee numeric, token_balance numeric, native_balance numeric); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.create_wallet_transfer(owner uuid, chain integer, kind app.wallet_token_kind, token text, symbol text, token_full_name text, decimals integer, recipient text, recipient_user uuid, transfer_amount numeric, transfer_gas_limit numeric, transfer_max_fee numeric, token_balance numeric, native_balance numeric) IS 'Creates a pending transfer that expires after wallet.pendingTtlSeconds, when the chain balances the server read cover it after what is still in flight (amounts in their token, gas in native currency); else AG422 insufficient_funds with the figures. The wallet row lock serializes transfers of one wallet. Server path only: the balances are the server''s reading of the chain.';

--
-- Name: digest_conversation(uuid, bigint); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.digest_conversation(target_conversation_id uuid, upto_seq bigint) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  conversation app.conversations;
  from_seq bigint;
  recipients uuid[];
  titles text[];
  bodies text[];
  datas jsonb[];
begin
  select * into conversation from app.conversations c where c.id = target_conversation_id;
  if not found or upto_seq is null then
    return 0;
  end if;
  insert into app_private.message_digests (conversation_id) values (target_conversation_id)
  on conflict do nothing;
  -- One digest of a conversation at a time; a later one starts where this one ends.
  select d.digested_seq into from_seq from app_private.message_digests d
  where d.conversation_id = target_conversation_id for update;
  if upto_seq <= from_seq then
    return 0;
  end if;
  -- Read marks wait for this digest: one moved meanwhile would not see what it tells of.
  perform 1 from app.conversation_participants p
  where p.conversation_id = target_conversation_id for share;

  -- Per participant: the live messages of others since the last digest that they have not read
  -- (and sent after they joined), their number and the newest of them.
  with news as (
    select m.id, m.seq, m.sender_id, m.created_at
    from app.messages m
    where m.conversation_id = target_conversation_id and m.seq > from_seq and m.seq <= upto_seq
      and m.deleted_at is null
  ), told as (
    select p.user_id, count(*)::integer as n, (array_agg(x.id order by x.seq desc))[1] as newest
    from app.conversation_participants p
    join news x on x.sender_id is distinct from p.user_id and x.seq > p.last_read_seq
                   and x.created_at >= p.joined_at
    where p.conversation_id = target_conversation_id
    group by p.user_id
  ), shaped as (
    select t.user_id, t.n, m.id as message_id, m.content,
           coalesce((select nullif(u.name, '') from app.users u where u.id = m.sender_id), 'Someone')
             as sender_name
    from told t join app.messages m on m.id = t.newest
  )
  select array_agg(x.user_id order by x.user_id),
         array_agg(left(coalesce(conversation.title, x.sender_name), 200) order by x.user_id),
         array_agg(left(case when conversation.type = 'group' then x.sender_name || ': ' else '' end
                        || x.content, 140) order by x.user_id),
         array_agg(jsonb_build_object('conversationId', target_conversation_id,
                                      'messageId', x.message_id, 'count', x.n) order by x.user_id)
  into recipients, titles, bodies, datas
  from shaped x;

  if recipients is not null then
    perform app_private.notify_rows('MESSAGE', recipients, titles, bodies, datas, 'normal',
                                    'conversation:' || target_conversation_id::text);
  end if;
  update app_private.message_digests d set digested_seq = upto_seq, digested_at = now()
  where d.conversation_id = target_conversation_id;
  return coalesce(cardinality(recipients), 0);
end;
$$;

--
-- Name: FUNCTION digest_conversation(target_conversation_id uuid, upto_seq bigint); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.digest_conversation(target_conversation_id uuid, upto_seq bigint) IS 'Second half of the notifications.digest job: tells each participant of the conversation''s messages of others after the last digest and up to upto_seq (from claim_message_digest) that they have not read, in one app_private.notify_rows call: under the conversation''s collapse key, one unread MESSAGE notification per participant whose count adds the new messages and whose messageId and preview are the newest one''s (a participant without one gets a new notification, its event and push). Digests of a conversation take turns (its message_digests row); read marks wait for it. Returns how many participants were told. security definer: it writes other users'' inboxes.';

--
-- Name: emit_ephemeral(text, text, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.emit_ephemeral(topic text, event text, payload jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  envelope jsonb := jsonb_build_object(
    'id', 'ephemeral.' || gen_random_uuid()::text,
    'topic', topic,
    'event', event,
    'payload', payload,
    'createdAt', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  );
begin
  perform realtime.send(envelope, event, topic, true);
  perform set_config('realtime.topic', '', true);
  perform pg_notify('agora_ephemeral', envelope::text);
end;
$$;

--
-- Name: FUNCTION emit_ephemeral(topic text, event text, payload jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.emit_ephemeral(topic text, event text, payload jsonb) IS 'Ephemeral events (typing): delivered to live subscribers only, never stored in app.events. Hosted Realtime gets them through realtime.send, API processes through NOTIFY. security definer for the same reason as emit_event.';

--
-- Name: emit_event(text, text, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.emit_event(topic text, event text, payload jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  row app.events;
begin
  insert into app.events (topic, event, payload) values (topic, event, payload) returning * into row;
  perform realtime.send(
    jsonb_build_object(
      'id', row.xid::text || '.' || row.id::text,
      'topic', row.topic,
      'event', row.event,
      'payload', row.payload,
      'createdAt', to_char(row.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    ),
    event, topic, true
  );
  -- realtime.send sets realtime.topic for the transaction; clear it so nothing later relies on it.
  perform set_config('realtime.topic', '', true);
  -- Wakes the event hubs of every API process; NOTIFY is delivered at commit.
  perform pg_notify('agora_events', '');
end;
$$;

--
-- Name: FUNCTION emit_event(topic text, event text, payload jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.emit_event(topic text, event text, payload jsonb) IS 'Appends a durable event and hands the same envelope to Realtime; its id is the event''s cursor (<xid>.<id>), the same on every transport, so clients remove duplicates. security definer: triggers write events on behalf of whichever user caused them.';

--
-- Name: emit_order_event(app.orders, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.emit_order_event(target app.orders, event text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  payload jsonb := app.order_json(target);
begin
  if target.buyer_id is not null then
    perform app_private.emit_event('user:' || target.buyer_id, event, payload);
  end if;
  perform app_private.emit_event('vendor:' || target.vendor_id, event, payload);
end;
$$;

--
-- Name: FUNCTION emit_order_event(target app.orders, event text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.emit_order_event(target app.orders, event text) IS 'order.created / order.status_changed on user:<buyerId> and vendor:<vendorId>, each carrying the order as GET /api/store/orders/:id returns it. Called inside the order functions, with their rights.';

--
-- Name: enqueue_job(text, jsonb, timestamp with time zone, text, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.enqueue_job(kind text, payload jsonb DEFAULT '{}'::jsonb, run_at timestamp with time zone DEFAULT now(), dedupe_key text DEFAULT NULL::text, max_attempts integer DEFAULT 10) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  job_id bigint;
begin
  insert into app_private.jobs (kind, payload, run_at, dedupe_key, max_attempts)
  values (
    enqueue_job.kind, coalesce(enqueue_job.payload, '{}'), coalesce(enqueue_job.run_at, now()),
    enqueue_job.dedupe_key, coalesce(enqueue_job.max_attempts, 10)
  )
  on conflict on constraint jobs_dedupe_key_key do nothing
  returning id into job_id;
  if job_id is null then
    select j.id into job_id from app_private.jobs j where j.dedupe_key = enqueue_job.dedupe_key;
    return job_id;
  end if;
  perform pg_notify('agora_jobs', enqueue_job.kind);
  return job_id;
end;
$$;

--
-- Name: FUNCTION enqueue_job(kind text, payload jsonb, run_at timestamp with time zone, dedupe_key text, max_attempts integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.enqueue_job(kind text, payload jsonb, run_at timestamp with time zone, dedupe_key text, max_attempts integer) IS 'Queues a job (kind, payload, not before run_at, at most max_attempts attempts) and NOTIFYs agora_jobs at commit; with a dedupe_key already taken, returns that job instead. For SQL functions and triggers (security definer) and the server''s own connection.';

--
-- Name: expire_reservations(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.expire_reservations() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  expired uuid;
  n integer := 0;
begin
  for expired in
    select c.id from app.checkouts c
    where c.closed_at is null and c.reserved_until < now()
    order by c.reserved_until
    for update skip locked
  loop
    perform app_private.cancel_unpaid_checkout(expired, 'system', null, 'reservation expired');
    perform app_private.close_checkout_if_settled(expired);
    n := n + 1;
  end loop;
  return n;
end;
$$;

--
-- Name: FUNCTION expire_reservations(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.expire_reservations() IS 'Cancels the unpaid orders of checkouts whose reservation (store.reservationMinutes) ran out, so their stock is available again, and queues the cancellation of their payment intents. Returns how many checkouts it closed. Skips checkouts locked by a payment in progress (the next run sees them). Run every minute by pg_cron.';

--
-- Name: expire_wallet_transfers(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.expire_wallet_transfers() RETURNS integer
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  with expired as (
    update app.wallet_transactions t set status = 'expired'
    where t.status = 'pending' and t.expires_at <= now()
    returning 1
  )
  select count(*)::integer from expired
$$;

--
-- Name: FUNCTION expire_wallet_transfers(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.expire_wallet_transfers() IS 'pg_cron (agora-expire-wallet-transfers): pending transfers past their expiry become expired, with their event and notification; returns how many.';

--
-- Name: fail_job(bigint, uuid, text, interval, boolean); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.fail_job(job_id bigint, token uuid, error text, retry_after interval DEFAULT NULL::interval, permanent boolean DEFAULT false) RETURNS app_private.job_state
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  result app_private.job_state;
begin
  update app_private.jobs j
  set state = case when coalesce(permanent, false) or j.attempts >= j.max_attempts
                   then 'dead' else 'queued' end::app_private.job_state,
      run_at = case when coalesce(permanent, false) or j.attempts >= j.max_attempts then j.run_at
                    when retry_after is not null then now() + greatest(retry_after, interval '0')
                    else now() + app_private.job_backoff(j.attempts) end,
      finished_at = case when coalesce(permanent, false) or j.attempts >= j.max_attempts
                         then now() end,
      last_error = left(coalesce(error, 'failed'), 2000),
      claim_token = null,
      locked_until = null
  where j.id = job_id and j.state = 'running' and j.claim_token = token
  returning j.state into result;
  return result;
end;
$$;

--
-- Name: FUNCTION fail_job(job_id bigint, token uuid, error text, retry_after interval, permanent boolean); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.fail_job(job_id bigint, token uuid, error text, retry_after interval, permanent boolean) IS 'Records a failed attempt of a claimed job: queued again after retry_after or the backoff, or dead when permanent or out of attempts. Returns the new state, null if the lease was lost.';

--
-- Name: fail_settlement(uuid, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.fail_settlement(target_settlement_id uuid, why text) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update app.settlements s set status = 'failed', failure_reason = why
  where s.id = target_settlement_id and s.status = 'pending'
$$;

--
-- Name: FUNCTION fail_settlement(target_settlement_id uuid, why text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.fail_settlement(target_settlement_id uuid, why text) IS 'The provider refused a transfer for good: failed, with its reason, for an operator (set it back to pending and retry the dead store.payout job once fixed).';

--
-- Name: finish_batch_chunk(uuid, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.finish_batch_chunk(target_batch_id uuid, target_chunk integer) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- The batch row's lock serializes the chunks finishing together: each one's check below (a
  -- statement of its own, so a fresh snapshot) sees the others' commits, and the last one sees
  -- them all.
  perform 1 from app.notification_batches b where b.id = target_batch_id for update;
  update app_private.notification_batch_chunks x set done_at = coalesce(x.done_at, now())
  where x.batch_id = target_batch_id and x.chunk = target_chunk;
  if exists (select 1 from app_private.notification_batch_chunks x
             where x.batch_id = target_batch_id and x.done_at is null) then
    return false;
  end if;
  update app.notification_batches set status = 'done', finished_at = coalesce(finished_at, now())
  where id = target_batch_id;
  return true;
end;
$$;

--
-- Name: FUNCTION finish_batch_chunk(target_batch_id uuid, target_chunk integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.finish_batch_chunk(target_batch_id uuid, target_chunk integer) IS 'Marks a batch chunk done; the last one marks the batch done (chunks finishing at the same time take turns on the batch row''s lock, so one of them always sees all done). Returns whether the batch is done. security definer: batches are written by the server only.';

--
-- Name: finish_stripe_event(text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.finish_stripe_event(event_id text, event_outcome text) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update app_private.stripe_events e set processed_at = now(), outcome = event_outcome
  where e.id = event_id
$$;

--
-- Name: FUNCTION finish_stripe_event(event_id text, event_outcome text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.finish_stripe_event(event_id text, event_outcome text) IS 'Marks an event handled, with what it did (for operators reading app_private.stripe_events).';

--
-- Name: finish_wallet_transaction(uuid, app.wallet_transaction_status, bigint, text, numeric, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.finish_wallet_transaction(target_id uuid, outcome app.wallet_transaction_status, mined_block bigint, mined_block_hash text, paid_fee numeric, failure text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  if outcome not in ('confirmed', 'failed') then
    raise exception 'a transfer finishes confirmed or failed' using errcode = '22023';
  end if;
  update app.wallet_transactions t
  set status = outcome, block_number = mined_block, block_hash = mined_block_hash, fee = paid_fee,
      error = left(failure, 500), confirmed_at = case when outcome = 'confirmed' then now() end
  where t.id = target_id and t.status = 'submitted';
  return found;
end;
$$;

--
-- Name: FUNCTION finish_wallet_transaction(target_id uuid, outcome app.wallet_transaction_status, mined_block bigint, mined_block_hash text, paid_fee numeric, failure text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.finish_wallet_transaction(target_id uuid, outcome app.wallet_transaction_status, mined_block bigint, mined_block_hash text, paid_fee numeric, failure text) IS 'Moves a submitted transfer to confirmed or failed with its block, fee and error; false when it had already moved on (a watcher ran twice). Server path only.';

--
-- Name: format_token_amount(numeric, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.format_token_amount(amount numeric, decimals integer) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
  return (
    select case
      when decimals = 0 then amount::text
      else rtrim(rtrim(left(d.digits, length(d.digits) - decimals) || '.' || right(d.digits, decimals), '0'), '.')
    end
    from (select lpad(amount::text, greatest(decimals + 1, length(amount::text)), '0') as digits) d
  );
end;
$$;

--
-- Name: FUNCTION format_token_amount(amount numeric, decimals integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.format_token_amount(amount numeric, decimals integer) IS 'A base-unit amount as whole tokens (trailing zeros dropped), for notification texts.';

--
-- Name: guard_attachment_update(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_attachment_update() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if new.id <> old.id or new.uploader_id <> old.uploader_id or new.storage_key <> old.storage_key
     or new.name <> old.name or new.content_type <> old.content_type or new.size <> old.size then
    raise exception 'an attachment''s file never changes' using errcode = '42501';
  end if;
  if old.message_id is not null and current_setting('role', true) in ('anon', 'authenticated') then
    raise exception 'an attachment is attached once' using errcode = 'AG409';
  end if;
  if new.message_id is not null and not exists (
    select 1 from app.messages m
    join app.conversation_participants p on p.conversation_id = m.conversation_id and p.user_id = new.uploader_id
    where m.id = new.message_id and m.sender_id = new.uploader_id and m.conversation_id = new.conversation_id
      and m.deleted_at is null
  ) then
    raise exception 'an attachment goes on a live message of its uploader, who takes part in the conversation'
      using errcode = 'AG422';
  end if;
  return new;
end;
$$;

--
-- Name: FUNCTION guard_attachment_update(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_attachment_update() IS 'An attachment''s file never changes, it is attached once, and only to a live message of its uploader in a conversation the uploader takes part in. security definer: it reads messages and participants the update may not see.';

--
-- Name: guard_message_update(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_message_update() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- A foreign key's own `set null`: the author's account or the message replied to was deleted.
  -- Nothing else may change with it; the referenced row must really be gone.
  if (new.sender_id is null and old.sender_id is not null
      and not exists (select 1 from app.users u where u.id = old.sender_id))
     or (new.reply_to_id is null and old.reply_to_id is not null
         and not exists (select 1 from app.messages m where m.id = old.reply_to_id)) then
    if new.id = old.id and new.conversation_id = old.conversation_id and new.seq = old.seq
       and new.content = old.content and new.created_at = old.created_at
       and new.edited_at is not distinct from old.edited_at
       and new.deleted_at is not distinct from old.deleted_at
       and (new.sender_id is not distinct from old.sender_id or new.sender_id is null)
       and (new.reply_to_id is not distinct from old.reply_to_id or new.reply_to_id is null) then
      return new;
    end if;
  end if;
  -- Users change content only; trusted server paths (no API role) may also fix metadata.
  -- (The `role` setting, not current_user: this function runs with its owner's rights.)
  if current_setting('role', true) in ('anon', 'authenticated') and (
     new.id <> old.id or new.conversation_id <> old.conversation_id or new.seq <> old.seq
     or new.sender_id is distinct from old.sender_id or new.created_at <> old.created_at
     or new.reply_to_id is distinct from old.reply_to_id) then
    raise exception 'only the content of a message can change' using errcode = '42501';
  end if;
  if old.deleted_at is not null then
    raise exception 'a deleted message cannot change' using errcode = 'AG422';
  end if;
  if new.deleted_at is not null then
    new.content := '';
    new.edited_at := old.edited_at;
    return new;
  end if;
  if new.content <> old.content then
    -- The edit window and the length limit hold for every path a user has, not only app.edit_message.
    if current_setting('role', true) in ('anon', 'authenticated') then
      if old.created_at < now() - make_interval(mins => app.config_int('limits', 'messageEditWindowMinutes')) then
        raise exception 'the edit window has closed' using errcode = 'AG422';
      end if;
      if char_length(new.content) > app.config_int('limits', 'messageMaxLength') then
        raise exception 'a message has at most % characters', app.config_int('limits', 'messageMaxLength')
          using errcode = 'AG400';
      end if;
    end if;
    insert into app.message_versions (message_id, content, written_at)
    values (old.id, old.content, coalesce(old.edited_at, old.created_at));
    new.edited_at := now();
  end if;
  return new;
end;
$$;

--
-- Name: FUNCTION guard_message_update(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_message_update() IS 'Message edits keep the earlier version in app.message_versions; users change content only, within the configured edit window and length, never on a tombstone. Deletion (deleted_at set) empties the content. The foreign keys'' own set null (the author''s account or the replied-to message deleted) passes, tombstones included, when nothing else changes and the referenced row is gone.';

--
-- Name: guard_notification_read(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_notification_read() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  -- (The `role` setting, not current_user: security definer callers keep the caller's setting.)
  if current_setting('role', true) in ('anon', 'authenticated') then
    if old.read_at is not null then
      new.read_at := old.read_at;
    elsif new.read_at is not null then
      new.read_at := now();
    end if;
  end if;
  return new;
end;
$$;

--
-- Name: FUNCTION guard_notification_read(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_notification_read() IS 'Users only mark notifications read: the time is the server''s (no backdating into the read-time figures) and a read notification stays read. Fires only when read_at is in the update.';

--
-- Name: guard_product_write(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_product_write() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  -- The API role of the statement (the GUC keeps it inside security definer code).
  api_role boolean := current_setting('role', true) in ('anon', 'authenticated');
  currency text;
begin
  if tg_op = 'UPDATE' then
    if new.id <> old.id or new.vendor_id <> old.vendor_id or new.created_at <> old.created_at then
      raise exception 'a product''s id, vendor and creation time never change' using errcode = '42501';
    end if;
    -- Stock and reservations move with every checkout: only a change by the vendor is an update.
    if (new.title, new.description, new.category, new.tags, new.images, new.price_amount,
        new.currency, new.status) is distinct from
       (old.title, old.description, old.category, old.tags, old.images, old.price_amount,
        old.currency, old.status) or (api_role and new.stock <> old.stock) then
      new.updated_at := now();
    end if;
  end if;
  if tg_op = 'INSERT' or (new.title, new.description, new.category, new.tags)
                          is distinct from (old.title, old.description, old.category, old.tags) then
    new.search := app_private.product_document(new.title, new.tags, new.category, new.description);
    insert into app_private.catalog_words (word)
    select distinct w
    from unnest(tsvector_to_array(to_tsvector('simple'::regconfig,
           new.title || ' ' || array_to_string(new.tags, ' ')))) as w
    where w ~ '^[[:alpha:]]{3,40}$'
    on conflict do nothing;
  end if;
  if api_role and (tg_op = 'INSERT' or new.currency <> old.currency) then
    currency := app_private.store_currency();
    if new.currency <> currency then
      raise exception 'the store sells in %', currency using errcode = 'AG400',
        detail = jsonb_build_array(jsonb_build_object('path', 'price.currency', 'message', 'must be ' || currency))::text;
    end if;
  end if;
  if new.stock < new.reserved then
    raise exception 'stock cannot go below the % units unpaid checkouts hold', new.reserved
      using errcode = 'AG422', detail = jsonb_build_object('reserved', new.reserved)::text;
  end if;
  return new;
end;
$_$;

--
-- Name: FUNCTION guard_product_write(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_product_write() IS 'Products keep their id, vendor and creation time; a price is in the store''s currency (AG400); stock never goes below what unpaid checkouts hold (AG422, clearer than the check constraint behind it); the search document and the vocabulary follow the text (computed only when it changes, so a checkout''s stock update stays cheap and HOT); updated_at is the server''s clock, moved by the vendor''s changes (not by checkouts). security definer: it reads the store''s currency from the configuration, which vendors may not read.';

--
-- Name: guard_read_mark(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_read_mark() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- The foreign key's own `set null`: the person who added this participant deleted their account.
  if new.added_by is null and old.added_by is not null
     and not exists (select 1 from app.users u where u.id = old.added_by)
     and new.conversation_id = old.conversation_id and new.user_id = old.user_id
     and new.joined_at = old.joined_at and new.last_read_seq = old.last_read_seq
     and new.last_read_message_id is not distinct from old.last_read_message_id
     and new.last_read_at is not distinct from old.last_read_at then
    return new;
  end if;
  if new.conversation_id <> old.conversation_id or new.user_id <> old.user_id
     or new.joined_at <> old.joined_at or new.added_by is distinct from old.added_by then
    raise exception 'only the read mark of a participant can change' using errcode = '42501';
  end if;
  if new.last_read_seq <= old.last_read_seq then
    new.last_read_seq := old.last_read_seq;
    new.last_read_message_id := old.last_read_message_id;
    new.last_read_at := old.last_read_at;
    return new;
  end if;
  -- Moving forward: the mark must name a message of this conversation at that position.
  if not exists (
    select 1 from app.messages m
    where m.id = new.last_read_message_id and m.conversation_id = new.conversation_id and m.seq = new.last_read_seq
  ) then
    raise exception 'a read mark names a message of the conversation' using errcode = 'AG422';
  end if;
  new.last_read_at := now();
  return new;
end;
$$;

--
-- Name: FUNCTION guard_read_mark(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_read_mark() IS 'Read marks move forward only and name a real message at that position; nothing else of a participant row changes, except the foreign key''s own set null of added_by when that account was deleted. security definer: it reads messages the row''s update may not see.';

--
-- Name: guard_session_update(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_session_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  if auth.uid() is not null or current_user in ('anon', 'authenticated') then
    if old.revoked_at is not null then
      raise exception 'a revoked session cannot change' using errcode = '42501';
    end if;
    new.revoked_at := now();
  end if;
  return new;
end;
$$;

--
-- Name: FUNCTION guard_session_update(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_session_update() IS 'Users revoke their own sessions and nothing more: the revocation time is the server''s clock (no backdating into the prune window) and a revoked session never changes again.';

--
-- Name: guard_settlement_update(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_settlement_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  if (new.id, new.run_id, new.vendor_id, new.period_end, new.order_count, new.gross, new.commission,
      new.refunds, new.net, new.currency, new.created_at)
     is distinct from
     (old.id, old.run_id, old.vendor_id, old.period_end, old.order_count, old.gross, old.commission,
      old.refunds, old.net, old.currency, old.created_at) then
    raise exception 'a settlement''s amounts never change' using errcode = '42501';
  end if;
  new.updated_at := now();
  return new;
end;
$$;

--
-- Name: FUNCTION guard_settlement_update(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_settlement_update() IS 'A settlement''s vendor, period and amounts are fixed when its run writes it; only its payout (status, transfer, failure, carry, paid time) moves.';

--
-- Name: guard_user_delete(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_user_delete() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  if old.role = 'ADMIN' and old.status = 'active' then
    -- The same lock as demotions and suspensions (app_private.guard_user_update).
    perform pg_advisory_xact_lock(hashtext('app.users.active_admins'));
    if not exists (
      select 1 from app.users u where u.role = 'ADMIN' and u.status = 'active' and u.id <> old.id
    ) then
      raise exception 'the last active ADMIN cannot be deleted' using errcode = 'AG422';
    end if;
  end if;
  return old;
end;
$$;

--
-- Name: FUNCTION guard_user_delete(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_user_delete() IS 'No path deletes the last active ADMIN: an account deletion of the only one is refused (AG422). The advisory lock is the one demotions and suspensions take, so two admins deleting themselves at once cannot leave none.';

--
-- Name: guard_user_update(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_user_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  trusted boolean := me is null and current_user not in ('anon', 'authenticated');
begin
  if new.id <> old.id or new.created_at <> old.created_at then
    raise exception 'user ids and creation times never change' using errcode = '42501';
  end if;
  if not trusted and new.email <> old.email then
    raise exception 'the email address cannot be changed here' using errcode = '42501';
  end if;
  if new.role = old.role and new.status = old.status then
    return new;
  end if;
  if not trusted then
    if not app.is_admin() then
      raise exception 'only an ADMIN changes roles and status' using errcode = '42501';
    end if;
    if old.id = me then
      raise exception 'an ADMIN cannot change their own role or status' using errcode = 'AG422';
    end if;
    if new.role <> old.role and coalesce(current_setting('agora.role_change_reason', true), '') = '' then
      raise exception 'a role change needs a reason (use app.change_user_role)' using errcode = 'AG400';
    end if;
  end if;
  if old.role = 'ADMIN' and old.status = 'active' and (new.role <> 'ADMIN' or new.status <> 'active') then
    perform pg_advisory_xact_lock(hashtext('app.users.active_admins'));
    if not exists (
      select 1 from app.users u
      where u.role = 'ADMIN' and u.status = 'active' and u.id <> old.id
    ) then
      raise exception 'the last active ADMIN cannot be demoted or suspended' using errcode = 'AG422';
    end if;
  end if;
  return new;
end;
$$;

--
-- Name: FUNCTION guard_user_update(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_user_update() IS 'Users edit their own profile but never their id, email, role or status; only an ADMIN changes roles and status, never their own, and never so that no active ADMIN is left (an advisory lock serializes concurrent demotions, so two admins cannot demote each other into an admin-less platform). A transaction without claims is a trusted server path (sign-in, seed) and passes.';

--
-- Name: hit_rate_limit(text, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.hit_rate_limit(bucket_key text, window_seconds integer) RETURNS TABLE(hits integer, reset_at timestamp with time zone)
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  insert into app_private.rate_limits as r (bucket, window_start, hits)
  values (
    bucket_key,
    to_timestamp(floor(extract(epoch from now()) / window_seconds) * window_seconds),
    1
  )
  on conflict (bucket, window_start) do update set hits = r.hits + 1
  returning r.hits, r.window_start + make_interval(secs => window_seconds)
$$;

--
-- Name: FUNCTION hit_rate_limit(bucket_key text, window_seconds integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.hit_rate_limit(bucket_key text, window_seconds integer) IS 'Counts one hit against a fixed window and returns the count and when the window ends. One upsert, so concurrent instances count exactly. Called only by the server''s own connection, before any user transaction.';

--
-- Name: hold_settlement(uuid, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.hold_settlement(target_settlement_id uuid, why text) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update app.settlements s set status = 'held', failure_reason = why
  where s.id = target_settlement_id and s.status = 'pending'
$$;

--
-- Name: FUNCTION hold_settlement(target_settlement_id uuid, why text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.hold_settlement(target_settlement_id uuid, why text) IS 'A pending settlement whose vendor cannot be paid now (no active payout account): held, paid when the account becomes active.';

--
-- Name: idempotent_answer(uuid, text, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.idempotent_answer(owner uuid, idempotency_key text, key_scope text, body_hash text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
  existing app_private.idempotency_keys;
begin
  select * into existing from app_private.idempotency_keys k
  where k.user_id = owner and k.key = idempotency_key and k.created_at >= now() - interval '24 hours';
  if not found then
    return null;
  end if;
  if existing.scope <> key_scope or existing.request_hash <> body_hash then
    return jsonb_build_object('conflict', true);
  end if;
  return jsonb_build_object('response', existing.response);
end;
$$;

--
-- Name: FUNCTION idempotent_answer(owner uuid, idempotency_key text, key_scope text, body_hash text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.idempotent_answer(owner uuid, idempotency_key text, key_scope text, body_hash text) IS 'What a user''s key already answers: null when it is unused (or older than 24 h), {conflict: true} for another scope or body, else {response} (null while its first request runs). Read without claiming: claim_idempotency_key uses it after a duplicate insert, and a server path may ask before work that needs an outside service (a wallet transfer reads the chain first), so a finished key replays without it.';

--
-- Name: users; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.users (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text,
    name text DEFAULT ''::text NOT NULL,
    image text,
    role app.user_role DEFAULT 'SUBSCRIBER'::app.user_role NOT NULL,
    status app.user_status DEFAULT 'active'::app.user_status NOT NULL,
    wallet_address text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    last_sign_in_at timestamp with time zone,
    CONSTRAINT users_email_check CHECK ((((char_length(email) >= 3) AND (char_length(email) <= 320)) AND (email ~ '^[^@\s]+@[^@\s]+$'::text))),
    CONSTRAINT users_image_check CHECK ((char_length(image) <= 2048)),
    CONSTRAINT users_name_check CHECK ((char_length(name) <= 200)),
    CONSTRAINT users_wallet_address_check CHECK ((wallet_address ~ '^0x[0-9a-fA-F]{40}$'::text))
);

--
-- Name: TABLE users; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.users IS 'People on the platform, their role and status. The role here, not the one in a token, is what every check reads, so a change counts on the next statement.';

--
-- Name: COLUMN users.email; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON COLUMN app.users.email IS 'The account''s verified e-mail address (a magic link was followed, or Google or Apple said it is verified), or null: an account made by a wallet, or by a provider that did not vouch for the address. Sign-ins link to an account only through this address, so an unverified address is never stored here.';

--
-- Name: in_audience(app.users, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.in_audience(u app.users, audience jsonb) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select u.status = 'active' and (
    coalesce((audience ->> 'all')::boolean, false)
    or coalesce(audience -> 'userIds' ? u.id::text, false)
    or coalesce(audience -> 'roles' ? u.role::text, false)
  )
$$;

--
-- Name: FUNCTION in_audience(u app.users, audience jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.in_audience(u app.users, audience jsonb) IS 'Whether a user is in a bulk audience ({ userIds?, roles?, all? }, any of them): active users only, never suspended ones. Inlinable pure SQL (no pinned search_path, see app.notification_json).';

--
-- Name: inbox_page_for_session(uuid, uuid, app.notification_type, boolean, text, timestamp with time zone, timestamp with time zone, uuid, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.inbox_page_for_session(caller_session uuid, caller_user uuid, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer) RETURNS TABLE(id uuid, type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, read_at text, created_at text, unread integer)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
#variable_conflict use_column
declare
  caller_claims text;
  bound_time timestamptz := coalesce(after_time, 'infinity'::timestamptz);
  bound_id uuid := coalesce(after_id, 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid);
  lower_time timestamptz := coalesce(since, '-infinity'::timestamptz);
begin
  -- The session middleware's conditions (functions/api/auth/session-lookup.ts), with the pool's
  -- own rights, before the role changes.
  select json_build_object('sub', u.id, 'role', 'authenticated', 'session_id', s.id,
                           'email', coalesce(u.email, ''), 'user_role', u.role)::text
    into caller_claims
  from app.sessions s join app.users u on u.id = s.user_id
  where s.id = caller_session and s.user_id = caller_user
    and s.revoked_at is null and s.expires_at > now() and u.status = 'active';
  if caller_claims is null then
    -- The message is the API's usual 401 (AG codes' messages reach the caller).
    raise exception 'Sign in to continue.' using errcode = 'AG401';
  end if;
  perform set_config('request.jwt.claims', caller_claims, true);
  perform set_config('role', 'authenticated', true);
  if only_type is null and only_unread is null and pattern is null then
    return query
      select n.id, n.type, n.title, n.body, n.data, n.priority, n.read_at::text, n.created_at::text,
             coalesce((select c.unread from app.notification_counters c
                       where c.user_id = (select auth.uid())), 0)
      from app.notifications n
      where n.user_id = (select auth.uid()) and n.inbox
        and (n.created_at, n.id) < (bound_time, bound_id) and n.created_at >= lower_time
      order by n.created_at desc, n.id desc
      limit page_limit;
  else
    return query
      select n.id, n.type, n.title, n.body, n.data, n.priority, n.read_at::text, n.created_at::text,
             coalesce((select c.unread from app.notification_counters c
                       where c.user_id = (select auth.uid())), 0)
      from app.notifications n
      where n.user_id = (select auth.uid()) and n.inbox
        and (n.created_at, n.id) < (bound_time, bound_id) and n.created_at >= lower_time
        and (only_type is null or n.type = only_type)
        and (only_unread is null or (n.read_at is null) = only_unread)
        and (pattern is null or lower(n.title) like pattern or lower(n.body) like pattern)
      order by n.created_at desc, n.id desc
      limit page_limit;
  end if;
  if not found then
    return query
      select null::uuid, null::app.notification_type, null::text, null::text, null::jsonb,
             null::app.notification_priority, null::text, null::text,
             coalesce((select c.unread from app.notification_counters c
                       where c.user_id = (select auth.uid())), 0);
  end if;
end;
$$;

--
-- Name: FUNCTION inbox_page_for_session(caller_session uuid, caller_user uuid, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.inbox_page_for_session(caller_session uuid, caller_user uuid, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer) IS 'A page of the caller''s inbox in one statement, for GET /api/notifications (its hot path), session check included: the session the access token names must be live and its user active (else AG401), the claims are built from those rows, then the page is read under RLS as role authenticated, newest first, with the unread count (app.notification_counters) on every row; an empty page is one row with a null id carrying the count. One round trip instead of two (the session check, then the page): measured, the round trips and the session query cost more than the page. Only the API''s own role may call it, with ids from an access token whose signature it verified.';

--
-- Name: wallets; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.wallets (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    address text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    exported_at timestamp with time zone,
    CONSTRAINT wallets_address_check CHECK ((address ~ '^0x[0-9a-fA-F]{40}$'::text))
);

--
-- Name: TABLE wallets; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.wallets IS 'One custodial wallet per user: its address (EIP-55 checksummed) and when its key was last exported. The key itself is in app_private.wallet_keys, encrypted.';

--
-- Name: insert_wallet(uuid, uuid, text, text, bytea, bytea); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.insert_wallet(new_wallet_id uuid, new_owner uuid, new_address text, master_key_id text, sealed_data_key bytea, sealed_private_key bytea) RETURNS app.wallets
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  created app.wallets;
begin
  insert into app.wallets (id, user_id, address) values (new_wallet_id, new_owner, new_address)
  on conflict (user_id) do nothing
  returning * into created;
  if created.id is null then
    raise exception 'this user already has a wallet' using errcode = 'AG409';
  end if;
  insert into app_private.wallet_keys (wallet_id, key_id, wrapped_data_key, encrypted_private_key)
  values (new_wallet_id, master_key_id, sealed_data_key, sealed_private_key);
  insert into app_private.wallet_nonces (wallet_id) values (new_wallet_id);
  update app.users u set wallet_address = new_address where u.id = new_owner;
  return created;
end;
$$;

--
-- Name: FUNCTION insert_wallet(new_wallet_id uuid, new_owner uuid, new_address text, master_key_id text, sealed_data_key bytea, sealed_private_key bytea); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.insert_wallet(new_wallet_id uuid, new_owner uuid, new_address text, master_key_id text, sealed_data_key bytea, sealed_private_key bytea) IS 'Stores a new wallet, its sealed key and its nonce counter, and sets the user''s wallet_address; AG409 when the user already has one (a concurrent first sign-in loses cleanly). Server path only.';

--
-- Name: iso_time(timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.iso_time(t timestamp with time zone) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  select to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

--
-- Name: FUNCTION iso_time(t timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.iso_time(t timestamp with time zone) IS 'A time as the API writes it (ISO-8601, UTC, microseconds), for the export''s parts.';

--
-- Name: job_backoff(integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.job_backoff(attempts integer) RETURNS interval
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  select make_interval(secs => d / 2 + random() * d / 2)
  from (select least(3600, 10 * power(2, greatest(attempts, 1) - 1)) as d) x
$$;

--
-- Name: FUNCTION job_backoff(attempts integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.job_backoff(attempts integer) IS 'Backoff after a failed attempt: min(10 s * 2^(attempts-1), 1 h), jittered within its upper half.';

--
-- Name: jsonb_merge_deep(jsonb, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.jsonb_merge_deep(base jsonb, patch jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  select case
    when jsonb_typeof(base) = 'object' and jsonb_typeof(patch) = 'object' then (
      select coalesce(jsonb_object_agg(
        coalesce(b.key, p.key),
        case when b.key is null then p.value
             when p.key is null then b.value
             else app_private.jsonb_merge_deep(b.value, p.value) end
      ), '{}'::jsonb)
      from jsonb_each(base) b full join jsonb_each(patch) p on p.key = b.key
    )
    when patch is null then base
    else patch
  end
$$;

--
-- Name: FUNCTION jsonb_merge_deep(base jsonb, patch jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.jsonb_merge_deep(base jsonb, patch jsonb) IS 'Objects merged key by key at every depth, anything else replaced by the patch: how a partial stored configuration is laid over the defaults.';

--
-- Name: lock_admin_caller(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.lock_admin_caller() RETURNS uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  caller uuid := (select auth.uid());
  caller_is_admin boolean;
begin
  if caller is null then
    raise exception 'only an ADMIN does this' using errcode = '42501';
  end if;
  perform pg_advisory_xact_lock(hashtext('app.change_user_role'));
  select u.role = 'ADMIN' and u.status = 'active' into caller_is_admin
  from app.users u where u.id = caller
  for share;
  if not coalesce(caller_is_admin, false) then
    raise exception 'only an ADMIN does this' using errcode = '42501';
  end if;
  return caller;
end;
$$;

--
-- Name: FUNCTION lock_admin_caller(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.lock_admin_caller() IS 'Serializes an ADMIN''s change to a user with role changes (the advisory lock app.change_user_role takes), then share-locks the caller''s row and checks it is an active ADMIN; returns the caller. A demotion or suspension of the caller either committed before (and the change is refused) or waits for this transaction.';

--
-- Name: lock_order_products(uuid[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.lock_order_products(order_ids uuid[]) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  select 1 from app.products p
  where p.id in (select i.product_id from app.order_items i where i.order_id = any(order_ids))
  order by p.id
  for no key update of p
$$;

--
-- Name: FUNCTION lock_order_products(order_ids uuid[]); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.lock_order_products(order_ids uuid[]) IS 'Row-locks the products of some orders in id order before their stock changes: every path takes product locks in this one order, so two of them never wait on each other in a cycle.';

--
-- Name: mark_message_digest(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.mark_message_digest() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into app_private.message_digests_pending (conversation_id) values (new.conversation_id)
  on conflict do nothing;
  if found then
    perform app_private.enqueue_job('notifications.digest',
      jsonb_build_object('conversationId', new.conversation_id), now() + interval '1 second',
      'notifications.digest:' || new.conversation_id::text || ':' || new.seq::text);
  end if;
  return null;
end;
$$;

--
-- Name: FUNCTION mark_message_digest(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.mark_message_digest() IS 'A new message marks its conversation for a digest (app_private.message_digests_pending) and, when the conversation had no mark, queues its notifications.digest job a second later: the send does no notification work of its own. security definer: the marks and the job queue are server-only.';

--
-- Name: message_events(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.message_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  current app.messages;
  files jsonb;
begin
  select * into current from app.messages where id = new.id;
  if not found then
    return null;
  end if;
  if tg_op = 'INSERT' or (current.deleted_at is null and current.content <> old.content) then
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id) into files
    from app.attachments a where a.message_id = current.id;
  end if;
  if tg_op = 'INSERT' then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.created',
      app.message_object(current, files));
  elsif current.deleted_at is not null and old.deleted_at is null then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.deleted',
      jsonb_build_object('id', current.id, 'conversationId', current.conversation_id, 'seq', current.seq,
                         'deletedAt', to_char(current.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')));
  elsif current.content <> old.content then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.updated',
      app.message_object(current, files));
  end if;
  return null;
end;
$$;

--
-- Name: FUNCTION message_events(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.message_events() IS 'Durable message.created, message.updated and message.deleted events, emitted at commit (a deferred constraint trigger) so the payload is complete, attachments included; they are read here as the trigger''s owner.';

--
-- Name: move_order(app.orders, app.order_status, app.order_actor, uuid, text, text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.move_order(target app.orders, to_status app.order_status, by_actor app.order_actor, by_user uuid, move_reason text, tracking text DEFAULT NULL::text, ship_carrier text DEFAULT NULL::text) RETURNS app.orders
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  moved app.orders;
begin
  if not exists (
    select 1 from app.order_transitions t
    where t.from_status = target.status and t.to_status = move_order.to_status and t.actor = by_actor
  ) then
    raise exception 'an order cannot move from % to % by %', target.status, to_status, by_actor
      using errcode = 'AG422', hint = 'invalid_transition';
  end if;

  -- Stock: a payment turns the reservation into a sale; a cancellation before payment releases
  -- it; a cancellation or refund after payment puts the units back.
  if target.status = 'pending_payment' and to_status in ('paid', 'cancelled') then
    perform app_private.lock_order_products(array[target.id]);
    update app.products p
    set reserved = p.reserved - i.quantity,
        stock = p.stock - case when to_status = 'paid' then i.quantity else 0 end
    from app.order_items i
    where i.order_id = target.id and p.id = i.product_id;
  elsif to_status in ('cancelled', 'refunded') then
    perform app_private.lock_order_products(array[target.id]);
    update app.products p set stock = p.stock + i.quantity
    from app.order_items i
    where i.order_id = target.id and p.id = i.product_id;
    perform app_private.request_refund(target, coalesce(move_reason, to_status::text), by_user);
  end if;

  update app.orders o
  set status = to_status,
      payment_status = case
        when to_status = 'paid' then 'succeeded'::app.payment_status
        when to_status in ('cancelled', 'refunded') and target.status <> 'pending_payment' then 'refunded'
        else o.payment_status end,
      paid_at = case when to_status = 'paid' then now() else o.paid_at end,
      shipped_at = case when to_status = 'shipped' then now() else o.shipped_at end,
      tracking_number = case when to_status = 'shipped' then tracking else o.tracking_number end,
      carrier = case when to_status = 'shipped' then ship_carrier else o.carrier end,
      delivered_at = case when to_status = 'delivered' then now() else o.delivered_at end,
      completed_at = case when to_status = 'completed' then now() else o.completed_at end,
      cancelled_at = case when to_status = 'cancelled' then now() else o.cancelled_at end,
      refunded_at = case when to_status = 'refunded' then now() else o.refunded_at end
  where o.id = target.id
  returning * into moved;

  insert into app.order_history (order_id, from_status, to_status, actor, actor_id, reason)
  values (target.id, target.status, to_status, by_actor, by_user, move_reason);

  perform app_private.emit_order_event(moved, 'order.status_changed');
  perform app_private.after_order_change(moved, 'order.status_changed');
  return moved;
end;
$$;

--
-- Name: FUNCTION move_order(target app.orders, to_status app.order_status, by_actor app.order_actor, by_user uuid, move_reason text, tracking text, ship_carrier text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.move_order(target app.orders, to_status app.order_status, by_actor app.order_actor, by_user uuid, move_reason text, tracking text, ship_carrier text) IS 'One move of an order and its effects: stock (sale, release, restore, under ordered row locks), refunds owed (cancellation after payment, refund), payment status, the step''s time, the history row, the live order.status_changed to buyer and vendor. Refuses (AG422) a move app.order_transitions does not list for that actor; who the actor is is the caller''s business.';

--
-- Name: next_job_at(text[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.next_job_at(kinds text[]) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select least(
    (select min(j.run_at) from app_private.jobs j
      where j.state = 'queued' and j.kind = any(kinds)),
    (select min(j.locked_until) from app_private.jobs j
      where j.state = 'running' and j.kind = any(kinds))
  )
$$;

--
-- Name: FUNCTION next_job_at(kinds text[]); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.next_job_at(kinds text[]) IS 'The next time a job of these kinds becomes claimable (due run_at or lease end); null if none. The local worker sets its timer by it.';

--
-- Name: note_chain_head(integer, bigint); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.note_chain_head(chain integer, head bigint) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  insert into app_private.chain_heads as h (chain_id, block_number) values (chain, head)
  on conflict (chain_id) do update set block_number = greatest(h.block_number, excluded.block_number),
    updated_at = now()
$$;

--
-- Name: FUNCTION note_chain_head(chain integer, head bigint); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.note_chain_head(chain integer, head bigint) IS 'Records the newest block seen on a chain (never moves back), for confirmation counts.';

--
-- Name: notification_deleted_event(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notification_deleted_event() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if old.read_at is null then
    update app.notification_counters c set unread = c.unread - 1
    where c.user_id = old.user_id and c.unread > 0;
  end if;
  perform app_private.emit_event('user:' || old.user_id, 'notification.deleted', app.notification_json(old));
  return null;
end;
$$;

--
-- Name: FUNCTION notification_deleted_event(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.notification_deleted_event() IS 'When an inbox notification is deleted: one unread fewer if it was unread, and notification.deleted on user:<id>. security definer as notification_read_event.';

--
-- Name: notification_read_event(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notification_read_event() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  update app.notification_counters c set unread = c.unread - 1
  where c.user_id = new.user_id and c.unread > 0;
  perform app_private.emit_event('user:' || new.user_id, 'notification.read', app.notification_json(new));
  return null;
end;
$$;

--
-- Name: FUNCTION notification_read_event(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.notification_read_event() IS 'When an inbox notification becomes read, by any path (the route, read-all, a conversation read up to its latest message): one unread fewer in app.notification_counters, and notification.read on user:<id>. security definer: the counters and the event log are written by the server only.';

--
-- Name: notification_type_defaults(app.notification_type); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notification_type_defaults(notification_type app.notification_type) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  fallback jsonb := app_private.config_defaults() #> array['notifications', 'defaults', notification_type::text];
  stored jsonb;
begin
  select c.config #> array['notifications', 'defaults', notification_type::text] into stored
  from app.config_versions c order by c.version desc limit 1;
  return jsonb_build_object(
    'inApp', coalesce((stored ->> 'inApp')::boolean, (fallback ->> 'inApp')::boolean, true),
    'push', coalesce((stored ->> 'push')::boolean, (fallback ->> 'push')::boolean, true),
    'email', coalesce((stored ->> 'email')::boolean, (fallback ->> 'email')::boolean, false)
  );
end;
$$;

--
-- Name: FUNCTION notification_type_defaults(notification_type app.notification_type); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.notification_type_defaults(notification_type app.notification_type) IS 'The channels ({ inApp, push, email }) of one type for users who did not choose: notifications.defaults of the current configuration, each channel falling back to app_private.config_defaults. plpgsql, not SQL, on purpose: it is on the send''s hot path, and a security definer SQL function is planned again on every call (with config_defaults'' JSON parsed each time: about 0.3 ms), while plpgsql keeps its plans for the session. security definer: the configuration is readable by ADMINs only; it returns three booleans.';

--
-- Name: notify(uuid, app.notification_type, text, text, jsonb, app.notification_priority, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notify(recipient uuid, notification_type app.notification_type, title text, body text, data jsonb DEFAULT '{}'::jsonb, priority app.notification_priority DEFAULT 'normal'::app.notification_priority, collapse_key text DEFAULT NULL::text) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  written record;
begin
  if recipient is null or not exists (select 1 from app.users u where u.id = recipient) then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  select * into written
  from app_private.notify_many(array[recipient], notification_type, title, body, data, priority, collapse_key);
  return case when written.shown then written.notification_id end;
end;
$$;

--
-- Name: FUNCTION notify(recipient uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.notify(recipient uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text) IS 'Notifies one user (app_private.notify_many''s rules): returns the notification''s id, or null when the recipient''s preferences keep it out of the inbox (it may still be pushed or mailed). AG404 for an unknown user. For other domains'' SQL functions and triggers (orders, vendors, wallet, sign-ins); never granted to API roles. security definer as notify_many.';

--
-- Name: notify_many(uuid[], app.notification_type, text, text, jsonb, app.notification_priority, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notify_many(recipients uuid[], notification_type app.notification_type, title text, body text, data jsonb DEFAULT '{}'::jsonb, priority app.notification_priority DEFAULT 'normal'::app.notification_priority, collapse_key text DEFAULT NULL::text) RETURNS TABLE(recipient_id uuid, notification_id uuid, shown boolean, is_new boolean)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select * from app_private.notify_rows(
    notification_type, recipients,
    array_fill(title, array[cardinality(recipients)]),
    array_fill(body, array[cardinality(recipients)]),
    array_fill(coalesce(data, '{}'::jsonb), array[cardinality(recipients)]),
    priority, collapse_key)
$$;

--
-- Name: FUNCTION notify_many(recipients uuid[], notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.notify_many(recipients uuid[], notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text) IS 'The same notification for many recipients in one statement: app_private.notify_rows with one title, body and data for all (its rules apply). security definer as notify_rows; never granted to API roles.';

--
-- Name: notify_rows(app.notification_type, uuid[], text[], text[], jsonb[], app.notification_priority, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority DEFAULT 'normal'::app.notification_priority, collapse_key text DEFAULT NULL::text) RETURNS TABLE(recipient_id uuid, notification_id uuid, shown boolean, is_new boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
#variable_conflict use_column
declare
  defaults jsonb := app_private.notification_type_defaults(notification_type);
  critical boolean := priority = 'critical';
  r record;
  deliveries integer;
begin
  if cardinality(recipients) is distinct from cardinality(titles)
     or cardinality(recipients) is distinct from cardinality(bodies)
     or cardinality(recipients) is distinct from cardinality(datas) then
    raise exception 'one title, body and data per recipient' using errcode = 'AG400';
  end if;
  if exists (select 1 from unnest(titles) t where t is null or char_length(t) not between 1 and 200) then
    raise exception 'a notification''s title has 1 to 200 characters' using errcode = 'AG400';
  end if;
  if exists (select 1 from unnest(bodies) b where b is null or char_length(b) > 2000) then
    raise exception 'a notification''s body has at most 2000 characters' using errcode = 'AG400';
  end if;
  if exists (select 1 from unnest(datas) d
             where d is not null and (jsonb_typeof(d) <> 'object' or octet_length(d::text) > 2048)) then
    raise exception 'a notification''s data is a JSON object of at most 2048 bytes' using errcode = 'AG400';
  end if;
  for r in
    with given as (
      -- One row per recipient (the first, if one is named twice).
      select distinct on (g.uid) g.uid, g.title, g.body,
             case when notify_rows.collapse_key is not null and not coalesce(g.data, '{}') ? 'count'
                  then coalesce(g.data, '{}') || '{"count": 1}'::jsonb
                  else coalesce(g.data, '{}') end as data
      from unnest(recipients, titles, bodies, datas) with ordinality as g (uid, title, body, data, i)
      order by g.uid, g.i
    ), decided as (
      select u.id as uid, g.title, g.body, g.data,
             critical or app_private.wants(p.types, notification_type, 'inApp', defaults) as want_inbox,
             critical or app_private.wants(p.types, notification_type, 'push', defaults) as want_push,
             -- No e-mail for people without an address (wallet and some OpenID sign-ins).
             u.email is not null
               and (critical or app_private.wants(p.types, notification_type, 'email', defaults)) as want_email,
             case when not critical
                  then app_private.quiet_until(p.quiet_start, p.quiet_end, p.quiet_time_zone, now()) end
               as quiet_until
      from given g
      join app.users u on u.id = g.uid
      left join app.notification_preferences p on p.user_id = u.id
    ), written as (
      insert into app.notifications as n (user_id, type, title, body, data, priority, collapse_key, inbox)
      select d.uid, notification_type, d.title, d.body, d.data,
             notify_rows.priority, notify_rows.collapse_key, d.want_inbox
      from decided d
      on conflict (user_id, collapse_key) where read_at is null and collapse_key is not null
      do update set
        title = excluded.title,
        body = excluded.body,
        data = excluded.data || jsonb_build_object('count',
          coalesce((n.data ->> 'count')::integer, 0) + coalesce((excluded.data ->> 'count')::integer, 1)),
        priority = greatest(n.priority, excluded.priority),
        updated_at = now()
      returning n.id, n.user_id, n.inbox, n.xmax = 0 as created
    )
    select w.id, w.user_id, w.inbox, w.created, d.want_push, d.want_email, d.quiet_until
    from written w join decided d on d.uid = w.user_id
  loop
    if r.created then
      if r.inbox then
        perform app_private.emit_event('user:' || r.user_id, 'notification.created',
          (select app.notification_json(n) from app.notifications n where n.id = r.id));
      end if;
      deliveries := 0;
      if r.want_push then
        insert into app_private.notification_deliveries (notification_id, channel, device_id, not_before)
        select r.id, 'push', d.id, coalesce(r.quiet_until, now())
        from app.push_devices d where d.user_id = r.user_id;
        get diagnostics deliveries = row_count;
      end if;
      if r.want_email then
        insert into app_private.notification_deliveries (notification_id, channel, not_before)
        values (r.id, 'email', coalesce(r.quiet_until, now()));
        deliveries := deliveries + 1;
      end if;
      if deliveries > 0 then
        perform app_private.enqueue_job('notifications.deliver',
          jsonb_build_object('notificationIds', jsonb_build_array(r.id)),
          coalesce(r.quiet_until, now()), 'notifications.deliver:' || r.id::text);
      end if;
    end if;
    recipient_id := r.user_id;
    notification_id := r.id;
    shown := r.inbox;
    is_new := r.created;
    return next;
  end loop;
end;
$$;

--
-- Name: FUNCTION notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority, collapse_key text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority, collapse_key text) IS 'THE way notifications are written (notify and notify_many call it), for any number of recipients in one statement, each with its own title, body and data. Per recipient: the in-app row is shown in the inbox unless the type''s inApp is off (then it is kept hidden, for delivery and analytics), push goes to each registered device and e-mail once, as chosen or by default, held until quiet hours end; critical priority bypasses preferences and quiet hours. With a collapse key, an unread row with the same key is updated in place instead (title, body, data, data.count added up, the higher priority) and nothing else happens: no event, no new delivery. A new row emits notification.created on user:<id> (inbox rows) and queues a notifications.deliver job for its deliveries. Unknown recipients are skipped. AG400 for a title over 200 or empty, a body over 2000 characters, data that is not an object of at most 2048 bytes. security definer: it writes other users'' inboxes and the server-only delivery rows; callers are SQL functions and triggers of the platform, never API roles.';

--
-- Name: participant_events(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.participant_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  p app.conversation_participants := case when tg_op = 'DELETE' then old else new end;
  name text := case when tg_op = 'DELETE' then 'participant.removed' else 'participant.added' end;
  body jsonb;
begin
  body := jsonb_build_object('conversationId', p.conversation_id, 'userId', p.user_id);
  perform app_private.emit_event('conversation:' || p.conversation_id, name, body);
  perform app_private.emit_event('user:' || p.user_id, case when tg_op = 'DELETE' then 'conversation.left' else 'conversation.joined' end, body);
  return null;
end;
$$;

--
-- Name: FUNCTION participant_events(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.participant_events() IS 'Joining and leaving are events on the conversation and, for the person, on their user topic (so a client learns of new conversations live).';

--
-- Name: payout_to_make(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.payout_to_make(target_settlement_id uuid) RETURNS TABLE(status app.settlement_status, net bigint, currency text, vendor_id uuid, account_id text, payouts_status app.payouts_status)
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select s.status, s.net, s.currency, s.vendor_id, v.payout_account_id, v.payouts_status
  from app.settlements s join app.vendors v on v.id = s.vendor_id
  where s.id = target_settlement_id
$$;

--
-- Name: FUNCTION payout_to_make(target_settlement_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.payout_to_make(target_settlement_id uuid) IS 'What a store.payout job needs: the settlement''s status and net, and the vendor''s payout account and its status.';

--
-- Name: product_document(text, text[], text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.product_document(title text, tags text[], category text, description text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  select setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A')
      || setweight(to_tsvector('english'::regconfig, coalesce(array_to_string(tags, ' '), '')), 'B')
      || setweight(to_tsvector('english'::regconfig, coalesce(category, '')), 'C')
      || setweight(to_tsvector('english'::regconfig, coalesce(left(description, 20000), '')), 'D')
$$;

--
-- Name: FUNCTION product_document(title text, tags text[], category text, description text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.product_document(title text, tags text[], category text, description text) IS 'The text a product is found by, weighted: title (A) over tags (B) over category (C) over description (D), English stemming. Immutable: the same text always gives the same document.';

--
-- Name: prune_auth_state(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.prune_auth_state() RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from app_private.rate_limits where window_start < now() - interval '1 day';
  delete from app_private.magic_links where expires_at < now() - interval '1 day';
  delete from app_private.oauth_flows
    where expires_at < now() - interval '1 day'
      and (exchange_expires_at is null or exchange_expires_at < now() - interval '1 day');
  -- A verified identity nobody exchanged is not kept past its code.
  update app_private.oauth_flows set result_identity = null
    where result_identity is not null and exchange_expires_at < now();
  delete from app_private.siwe_nonces where expires_at < now() - interval '1 day';
  delete from app.sessions
    where (revoked_at is not null and revoked_at < now() - interval '30 days')
       or expires_at < now() - interval '30 days';
$$;

--
-- Name: FUNCTION prune_auth_state(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.prune_auth_state() IS 'Housekeeping for sign-in state (old rate-limit windows, used magic links, finished OAuth flows and wallet nonces, long-dead sessions), run by pg_cron every 15 minutes.';

--
-- Name: prune_events(integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.prune_events(keep_days integer DEFAULT 3) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from app.events where created_at < now() - make_interval(days => keep_days);
$$;

--
-- Name: FUNCTION prune_events(keep_days integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.prune_events(keep_days integer) IS 'The event log keeps keep_days (default 3): long enough for any client to resume, short enough to stay small. Run by pg_cron.';

--
-- Name: prune_idempotency_keys(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.prune_idempotency_keys() RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from app_private.idempotency_keys where created_at < now() - interval '24 hours';
$$;

--
-- Name: FUNCTION prune_idempotency_keys(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.prune_idempotency_keys() IS 'Keys replay for 24 hours; older ones are removed by pg_cron.';

--
-- Name: prune_jobs(interval, interval); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.prune_jobs(done_for interval DEFAULT '3 days'::interval, dead_for interval DEFAULT '30 days'::interval) RETURNS integer
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  with gone as (
    delete from app_private.jobs j
    where (j.state = 'done' and j.finished_at < now() - done_for)
       or (j.state = 'dead' and j.finished_at < now() - dead_for)
    returning 1
  )
  select count(*)::integer from gone
$$;

--
-- Name: FUNCTION prune_jobs(done_for interval, dead_for interval); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.prune_jobs(done_for interval, dead_for interval) IS 'pg_cron (agora-prune-jobs): deletes done jobs older than done_for and dead ones older than dead_for; returns how many.';

--
-- Name: prune_logs(integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.prune_logs(keep_days integer DEFAULT 90) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from app.access_logs where created_at < now() - make_interval(days => keep_days);
  delete from app.security_events where created_at < now() - make_interval(days => keep_days);
$$;

--
-- Name: FUNCTION prune_logs(keep_days integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.prune_logs(keep_days integer) IS 'Keeps access logs and security events for a number of days (90 by default), run by pg_cron daily.';

--
-- Name: queue_storage_deletion(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.queue_storage_deletion() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform app_private.enqueue_job(
    'storage.delete', jsonb_build_object('key', old.storage_key), now(),
    'storage.delete:' || old.storage_key
  );
  return null;
end;
$$;

--
-- Name: FUNCTION queue_storage_deletion(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.queue_storage_deletion() IS 'Trigger on app.attachments (after delete): enqueues a storage.delete job for the row''s file. security definer because users delete attachments through cascades and app_private has no grants.';

--
-- Name: quiet_until(time without time zone, time without time zone, text, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.quiet_until(quiet_start time without time zone, quiet_end time without time zone, time_zone text, at timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
  select case
    when quiet_start is null or quiet_end is null or time_zone is null then null
    when quiet_start < quiet_end then
      case when (at at time zone time_zone)::time >= quiet_start and (at at time zone time_zone)::time < quiet_end
           then ((at at time zone time_zone)::date + quiet_end) at time zone time_zone end
    when (at at time zone time_zone)::time >= quiet_start
      then ((at at time zone time_zone)::date + 1 + quiet_end) at time zone time_zone
    when (at at time zone time_zone)::time < quiet_end
      then ((at at time zone time_zone)::date + quiet_end) at time zone time_zone
  end
$$;

--
-- Name: FUNCTION quiet_until(quiet_start time without time zone, quiet_end time without time zone, time_zone text, at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.quiet_until(quiet_start time without time zone, quiet_end time without time zone, time_zone text, at timestamp with time zone) IS 'When the quiet period that `at` falls in ends, or null when `at` is not in quiet hours. Start and end are wall-clock times in the time zone; a period whose start is after its end crosses midnight (22:00-07:00). Inlinable pure SQL (no pinned search_path, see app.notification_json).';

--
-- Name: read_mark_events(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.read_mark_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if new.last_read_seq > old.last_read_seq then
    perform app_private.emit_event('conversation:' || new.conversation_id, 'message.read',
      jsonb_build_object('conversationId', new.conversation_id, 'userId', new.user_id,
                         'lastReadMessageId', new.last_read_message_id, 'lastReadSeq', new.last_read_seq));
  end if;
  return null;
end;
$$;

--
-- Name: FUNCTION read_mark_events(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.read_mark_events() IS 'Each forward move of a read mark is a message.read event for the other participants.';

--
-- Name: record_deliveries(jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.record_deliveries(outcomes jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  recorded integer;
  refused_devices uuid[];
begin
  with outcome as (
    select * from jsonb_to_recordset(outcomes) as o(
      id bigint, token uuid, outcome text, code text, message text, "providerId" text,
      "retryAfter" double precision
    )
  ), updated as (
    update app_private.notification_deliveries d
    set status = case o.outcome when 'sent' then 'sent' when 'pruned' then 'pruned'
                                when 'failed' then 'failed' else 'queued' end::app_private.delivery_status,
        provider_message_id = left(o."providerId", 500),
        error_code = left(o.code, 100),
        error_message = left(o.message, 1000),
        finished_at = case when o.outcome = 'retry' then null else now() end,
        not_before = case when o.outcome = 'retry'
                          then now() + make_interval(secs => greatest(coalesce(o."retryAfter", 0), 0))
                          else d.not_before end,
        in_flight_since = null,
        in_flight_token = null
    from outcome o
    where d.id = o.id and d.in_flight_token = o.token and d.status = 'queued'
      and o.outcome in ('sent', 'failed', 'pruned', 'retry')
    returning d.device_id, o.outcome
  )
  select count(*)::integer, array_agg(u.device_id) filter (where u.outcome = 'pruned' and u.device_id is not null)
  into recorded, refused_devices
  from updated u;
  -- A statement of its own: the devices' foreign key sets device_id null on the rows just updated.
  if refused_devices is not null then
    delete from app.push_devices dv where dv.id = any(refused_devices);
  end if;
  return recorded;
end;
$$;

--
-- Name: FUNCTION record_deliveries(outcomes jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.record_deliveries(outcomes jsonb) IS 'Records the outcomes of claimed deliveries ([{ id, token, outcome: sent | failed | pruned | retry, code, message, providerId, retryAfter }]): sent keeps FCM''s message name, failed and pruned FCM''s error code; pruned also deletes the device (FCM said the token is unregistered or invalid); retry puts the row back in the queue, due after retryAfter seconds. Only a claim''s own token records (a stale attempt cannot overwrite another''s outcome). Returns how many were recorded. Server only.';

--
-- Name: record_payout(uuid, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.record_payout(target_settlement_id uuid, transfer text) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update app.settlements s set status = 'paid', transfer_id = transfer, paid_at = now(), failure_reason = null
  where s.id = target_settlement_id and s.status = 'pending'
$$;

--
-- Name: FUNCTION record_payout(target_settlement_id uuid, transfer text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.record_payout(target_settlement_id uuid, transfer text) IS 'A pending settlement was transferred: paid, with the transfer id.';

--
-- Name: record_refund_result(uuid, text, app.refund_status, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.record_refund_result(target_order_id uuid, refund_id text, result app.refund_status, failure text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  target app.orders;
begin
  update app.refunds r
  set status = result,
      provider_refund_id = coalesce(refund_id, r.provider_refund_id),
      failure_reason = failure,
      succeeded_at = case when result = 'succeeded' then coalesce(r.succeeded_at, now()) else r.succeeded_at end
  where r.order_id = target_order_id and r.status <> result;
  if found then
    select * into target from app.orders o where o.id = target_order_id;
    perform app_private.after_order_change(target, 'order.refund_' || result::text);
  end if;
end;
$$;

--
-- Name: FUNCTION record_refund_result(target_order_id uuid, refund_id text, result app.refund_status, failure text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.record_refund_result(target_order_id uuid, refund_id text, result app.refund_status, failure text) IS 'Records what the provider said to a refund (its id, succeeded or failed with the reason); repeating the same result changes nothing.';

--
-- Name: record_role_change(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.record_role_change() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  actor uuid := (select auth.uid());
  why text := coalesce(
    nullif(current_setting('agora.role_change_reason', true), ''), 'changed by a server path'
  );
  client_ip inet;
begin
  insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason)
  values (new.id, old.role, new.role, actor, why);
  if actor is not null then
    begin
      client_ip := nullif(current_setting('agora.client_ip', true), '')::inet;
    exception when invalid_text_representation then
      client_ip := null;
    end;
    insert into app.security_events (type, severity, user_id, ip, user_agent, details)
    values (
      'admin.role_changed',
      case when 'ADMIN' in (old.role, new.role) then 'critical' else 'warning' end::app.security_severity,
      new.id,
      client_ip,
      left(nullif(current_setting('agora.user_agent', true), ''), 1024),
      jsonb_build_object('by', actor, 'from', old.role, 'to', new.role, 'reason', why)
    );
  end if;
  return null;
end;
$$;

--
-- Name: FUNCTION record_role_change(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.record_role_change() IS 'Writes the audit row of every role change and, for a change by a signed-in ADMIN, its admin.role_changed security event, in the same transaction. security definer: nobody writes these rows directly.';

--
-- Name: record_security_event(text, app.security_severity, uuid, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.record_security_event(event_type text, event_severity app.security_severity, subject_user_id uuid, event_details jsonb) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  client_ip inet;
begin
  begin
    client_ip := nullif(current_setting('agora.client_ip', true), '')::inet;
  exception when invalid_text_representation then
    client_ip := null;
  end;
  insert into app.security_events (type, severity, user_id, ip, user_agent, details)
  values (event_type, event_severity, subject_user_id, client_ip,
          left(nullif(current_setting('agora.user_agent', true), ''), 1024), event_details);
end;
$$;

--
-- Name: FUNCTION record_security_event(event_type text, event_severity app.security_severity, subject_user_id uuid, event_details jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.record_security_event(event_type text, event_severity app.security_severity, subject_user_id uuid, event_details jsonb) IS 'A security event written inside the transaction of the change it describes, with the client address and user agent the API put in agora.client_ip and agora.user_agent: the change and its record commit together or not at all. Called by the security definer API functions below.';

--
-- Name: record_stripe_event(text, text, boolean, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.record_stripe_event(event_id text, event_type text, event_livemode boolean, event_payload jsonb) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  insert into app_private.stripe_events (id, type, livemode, payload)
  values (event_id, event_type, coalesce(event_livemode, false), event_payload)
  on conflict (id) do nothing;
  if not found then
    return false;
  end if;
  perform app_private.enqueue_job('store.stripe_event', jsonb_build_object('eventId', event_id),
                                  now(), 'stripe-event:' || event_id);
  return true;
end;
$$;

--
-- Name: FUNCTION record_stripe_event(event_id text, event_type text, event_livemode boolean, event_payload jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.record_stripe_event(event_id text, event_type text, event_livemode boolean, event_payload jsonb) IS 'The webhook''s one write: the event (verified by its signature before this) stored under its id and a store.stripe_event job queued, in one statement''s transaction; an event id seen before does nothing and returns false. Called by the webhook route on the API''s own connection.';

--
-- Name: refresh_wallet_nfts(integer, text[], text[], numeric[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.refresh_wallet_nfts(chain integer, holders text[], contracts text[], token_ids numeric[]) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  with keys as (
    select distinct k.holder, k.contract, k.token_id
    from unnest(holders, contracts, token_ids) as k (holder, contract, token_id)
  ),
  balances as (
    select w.id as wallet_id, w.user_id, k.contract, k.token_id,
           coalesce((select sum(x.amount) from app_private.nft_transfers x
                     where x.chain_id = chain and x.to_address = k.holder
                       and x.contract = k.contract and x.token_id = k.token_id), 0)
         - coalesce((select sum(x.amount) from app_private.nft_transfers x
                     where x.chain_id = chain and x.from_address = k.holder
                       and x.contract = k.contract and x.token_id = k.token_id), 0) as balance,
           (select x.standard from app_private.nft_transfers x
            where x.chain_id = chain and x.contract = k.contract limit 1) as standard
    from keys k join app.wallets w on w.address = k.holder
  ),
  gone as (
    delete from app.wallet_nfts n using balances b
    where b.balance <= 0 and n.wallet_id = b.wallet_id and n.chain_id = chain
      and n.contract = b.contract and n.token_id = b.token_id
    returning 1
  )
  insert into app.wallet_nfts as n (
    wallet_id, user_id, chain_id, contract, token_id, standard, balance, token_uri, name, image,
    collection_name, collection_symbol
  )
  select b.wallet_id, b.user_id, chain, b.contract, b.token_id, b.standard, b.balance,
         m.token_uri, m.name, m.image, c.name, c.symbol
  from balances b
  left join app_private.nft_tokens m
    on m.chain_id = chain and m.contract = b.contract and m.token_id = b.token_id
  left join app_private.nft_collections c on c.chain_id = chain and c.contract = b.contract
  where b.balance > 0
  on conflict (wallet_id, chain_id, contract, token_id) do update
    set balance = excluded.balance, token_uri = excluded.token_uri, name = excluded.name,
        image = excluded.image, collection_name = excluded.collection_name,
        collection_symbol = excluded.collection_symbol, updated_at = now()
$$;

--
-- Name: FUNCTION refresh_wallet_nfts(chain integer, holders text[], contracts text[], token_ids numeric[]); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.refresh_wallet_nfts(chain integer, holders text[], contracts text[], token_ids numeric[]) IS 'Recomputes the holdings of the given (holder, contract, token id) triples from app_private.nft_transfers: positive balances are upserted into app.wallet_nfts with their metadata, the rest deleted. The follower calls it after indexing or rolling back blocks. Server path only.';

--
-- Name: refund_to_make(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.refund_to_make(target_order_id uuid) RETURNS TABLE(payment_intent_id text, amount bigint, currency text, status app.refund_status)
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select c.payment_intent_id, r.amount, r.currency, r.status
  from app.refunds r
  join app.orders o on o.id = r.order_id
  join app.checkouts c on c.id = o.checkout_id
  where r.order_id = target_order_id
$$;

--
-- Name: FUNCTION refund_to_make(target_order_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.refund_to_make(target_order_id uuid) IS 'What a store.refund job needs: the checkout''s payment intent, the amount and currency owed, and the refund''s status (a succeeded one is not made again).';

--
-- Name: refuse_ledger_change(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.refuse_ledger_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  raise exception 'the settlement ledger is append-only' using errcode = '42501';
end;
$$;

--
-- Name: FUNCTION refuse_ledger_change(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.refuse_ledger_change() IS 'Keeps app.settlement_lines append-only for every role, the server''s own included: a correction is a new line, never an edit.';

--
-- Name: request_refund(app.orders, text, uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.request_refund(target app.orders, refund_reason text, requested uuid) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  insert into app.refunds (order_id, amount, currency, reason, requested_by)
  values (target.id, target.total, target.currency, refund_reason, requested)
  on conflict (order_id) do nothing;
  if found then
    perform app_private.enqueue_job('store.refund', jsonb_build_object('orderId', target.id),
                                    now(), 'refund:' || target.id);
  end if;
end;
$$;

--
-- Name: FUNCTION request_refund(target app.orders, refund_reason text, requested uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.request_refund(target app.orders, refund_reason text, requested uuid) IS 'Records the refund owed for an order and queues the store.refund job (dedupe key refund:<orderId>) that makes it through the payment provider with that same idempotency key: at most one refund per order, however often it is asked for.';

--
-- Name: retry_dead_job(bigint); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.retry_dead_job(job_id bigint) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  job_kind text;
begin
  update app_private.jobs j
  set state = 'queued', attempts = 0, run_at = now(), finished_at = null
  where j.id = job_id and j.state = 'dead'
  returning j.kind into job_kind;
  if job_kind is null then
    return false;
  end if;
  perform pg_notify('agora_jobs', job_kind);
  return true;
end;
$$;

--
-- Name: FUNCTION retry_dead_job(job_id bigint); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.retry_dead_job(job_id bigint) IS 'Operators: puts a dead job back in the queue, due now, with its attempts reset (after fixing the cause). last_error is kept until the next outcome.';

--
-- Name: revoke_sessions(uuid, text, uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.revoke_sessions(target_user_id uuid, why text, keep_session_id uuid DEFAULT NULL::uuid) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  revoked integer;
begin
  update app.sessions s set revoked_at = now(), revoked_reason = why
  where s.user_id = target_user_id and s.revoked_at is null
    and (keep_session_id is null or s.id <> keep_session_id);
  get diagnostics revoked = row_count;
  return revoked;
end;
$$;

--
-- Name: FUNCTION revoke_sessions(target_user_id uuid, why text, keep_session_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.revoke_sessions(target_user_id uuid, why text, keep_session_id uuid) IS 'Ends every live session of a user (but keep_session_id), at once: the session check of every request and the topic rule read app.sessions. Returns how many ended.';

--
-- Name: role_change_notification(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.role_change_notification() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform app_private.notify(
    new.user_id,
    'SYSTEM',
    'Your role changed',
    format('Your role is now %s (it was %s).', new.new_role, new.previous_role),
    jsonb_build_object('kind', 'role.changed', 'previousRole', new.previous_role, 'newRole', new.new_role)
  );
  return null;
end;
$$;

--
-- Name: FUNCTION role_change_notification(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.role_change_notification() IS 'A role change gives the user a SYSTEM notification (data.kind role.changed, the roles before and after; never the admin''s reason, which is for the audit trail). security definer: it writes other users'' inboxes through app_private.notify_many.';

--
-- Name: rollback_chain_index(integer, bigint, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.rollback_chain_index(chain integer, fork bigint, fork_hash text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  affected integer;
  touched record;
  moved record;
begin
  delete from app.wallet_transactions t
  where t.chain_id = chain and t.direction = 'in' and t.block_number > fork;
  get diagnostics affected = row_count;
  for moved in
    update app.wallet_transactions t
    set status = 'submitted', block_number = null, block_hash = null, fee = null, confirmed_at = null,
        error = null
    where t.chain_id = chain and t.direction = 'out' and t.block_number > fork
    returning t.id
  loop
    perform app_private.enqueue_job('wallet.watch', jsonb_build_object('transactionId', moved.id, 'round', 1),
      now(), null, 100);
    affected := affected + 1;
  end loop;
  select array_agg(k.holder) as holders, array_agg(k.contract) as contracts, array_agg(k.token_id) as token_ids
  into touched
  from (
    select x.to_address as holder, x.contract, x.token_id from app_private.nft_transfers x
    where x.chain_id = chain and x.block_number > fork
    union
    select x.from_address, x.contract, x.token_id from app_private.nft_transfers x
    where x.chain_id = chain and x.block_number > fork
  ) k;
  delete from app_private.nft_transfers x where x.chain_id = chain and x.block_number > fork;
  if touched.holders is not null then
    perform app_private.refresh_wallet_nfts(chain, touched.holders, touched.contracts, touched.token_ids);
  end if;
  delete from app_private.chain_blocks b where b.chain_id = chain and b.number > fork;
  update app_private.chain_cursors c set block_number = fork, block_hash = fork_hash, updated_at = now()
  where c.chain_id = chain;
  return affected;
end;
$$;

--
-- Name: FUNCTION rollback_chain_index(chain integer, fork bigint, fork_hash text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.rollback_chain_index(chain integer, fork bigint, fork_hash text) IS 'Rolls the follower back to block `fork` after a reorganization: incoming transfers and NFT logs above it are deleted (holdings recomputed), outgoing transfers mined above it return to submitted with a wallet.watch job, block hashes above it are dropped and the cursor moves to the fork. Returns the transactions touched. Server path only.';

--
-- Name: run_scheduled_settlements(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.run_scheduled_settlements() RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  if extract(hour from now() at time zone 'UTC')::integer <> app.config_int('store', 'settlementHourUtc') then
    return null;
  end if;
  return app_private.settle(now(), null, true);
end;
$$;

--
-- Name: FUNCTION run_scheduled_settlements(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.run_scheduled_settlements() IS 'The daily settlement: pg_cron calls it hourly and it settles only in the hour store.settlementHourUtc names (UTC), so changing that setting needs no rescheduling. Waits for a run in progress instead of failing.';

--
-- Name: send_message_as(text, uuid, text, uuid, uuid[], text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.send_message_as(claims text, target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  perform set_config('request.jwt.claims', claims, true);
  perform set_config('role', 'authenticated', true);
  return app.send_message(target_conversation_id, message_content, reply_to, attachment_ids,
                          idempotency_key, request_hash);
end;
$$;

--
-- Name: FUNCTION send_message_as(claims text, target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.send_message_as(claims text, target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text) IS 'A send in one statement, for the API''s hot path: sets the caller''s role and claims for this statement''s own transaction and runs app.send_message under them (RLS as always), so the commit follows at once on the server and the conversation''s row lock is never held across a round trip to the API. Only the API''s own role may call it: it trusts the claims it is given.';

--
-- Name: set_payout_account(uuid, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.set_payout_account(target_vendor_id uuid, account_id text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  update app.vendors v
  set payout_account_id = account_id,
      payouts_status = case when v.payouts_status = 'not_started' then 'pending' else v.payouts_status end
  where v.id = target_vendor_id and (v.payout_account_id is null or v.payout_account_id = account_id);
  if not found then
    raise exception 'the vendor has another payout account' using errcode = 'AG409';
  end if;
end;
$$;

--
-- Name: FUNCTION set_payout_account(target_vendor_id uuid, account_id text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.set_payout_account(target_vendor_id uuid, account_id text) IS 'Records the Connect account created for a vendor (once; a second, different account is AG409) and marks onboarding as started. Called by the API''s payouts route after creating the account with the provider.';

--
-- Name: settle(timestamp with time zone, uuid, boolean); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.settle(cut_off timestamp with time zone, started uuid, wait boolean DEFAULT false) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  new_run_id uuid := gen_random_uuid();
  default_bps integer := app.config_int('store', 'commissionBps');
  settled integer;
  created integer;
begin
  if wait then
    perform pg_advisory_xact_lock(hashtext('agora.settlements'));
  elsif not pg_try_advisory_xact_lock(hashtext('agora.settlements')) then
    raise exception 'a settlement run is in progress; try again when it is done' using errcode = 'AG409';
  end if;

  insert into app.settlement_runs (id, as_of, started_by) values (new_run_id, cut_off, started);

  with sales as (
    select 'sale'::text as kind, o.id as order_id, null::uuid as source, o.vendor_id, o.currency,
           o.total as amount,
           -- Per order, rounded half up to the minor unit (totals are positive integers).
           (o.total * coalesce(v.commission_bps, default_bps) + 5000) / 10000 as commission
    from app.orders o join app.vendors v on v.id = o.vendor_id
    where o.status in ('delivered', 'completed') and o.payment_status = 'succeeded'
      and o.delivered_at <= cut_off
      and not exists (select 1 from app.settlement_lines l where l.order_id = o.id and l.kind = 'sale')
  ), refunded as (
    select 'refund'::text, o.id, null::uuid, o.vendor_id, o.currency, o.total, 0::bigint
    from app.orders o
    where o.status = 'refunded' and o.refunded_at <= cut_off
      and exists (select 1 from app.settlement_lines l where l.order_id = o.id and l.kind = 'sale')
      and not exists (select 1 from app.settlement_lines l where l.order_id = o.id and l.kind = 'refund')
  ), carried as (
    select 'carry'::text, null::uuid, s.id, s.vendor_id, s.currency, -s.net, 0::bigint
    from app.settlements s
    where s.status = 'held' and s.net < 0 and s.carried_into is null
  ), lines as materialized (
    select * from sales union all select * from refunded union all select * from carried
  ), totals as (
    select l.vendor_id, l.currency,
           count(*) filter (where l.kind = 'sale')::integer as order_count,
           coalesce(sum(l.amount) filter (where l.kind = 'sale'), 0)::bigint as gross,
           coalesce(sum(l.commission), 0)::bigint as commission,
           coalesce(sum(l.amount) filter (where l.kind <> 'sale'), 0)::bigint as refunds
    from lines l group by l.vendor_id, l.currency
  ), made as (
    insert into app.settlements (run_id, vendor_id, period_end, order_count, gross, commission,
                                 refunds, net, currency, status, paid_at)
    select new_run_id, t.vendor_id, cut_off, t.order_count, t.gross, t.commission, t.refunds,
           t.gross - t.commission - t.refunds, t.currency,
           case when t.gross - t.commission - t.refunds = 0 then 'paid'
                when t.gross - t.commission - t.refunds < 0 then 'held'
                when v.payouts_status = 'active' then 'pending'
                else 'held' end::app.settlement_status,
           case when t.gross - t.commission - t.refunds = 0 then now() end
    from totals t join app.vendors v on v.id = t.vendor_id
    returning id, vendor_id, currency
  )
  insert into app.settlement_lines (settlement_id, vendor_id, kind, order_id, source_settlement_id, amount, commission)
  select m.id, l.vendor_id, l.kind, l.order_id, l.source, l.amount, l.commission
  from lines l join made m on m.vendor_id = l.vendor_id and m.currency = l.currency;

  update app.settlements s set carried_into = l.settlement_id
  from app.settlement_lines l
  join app.settlements made on made.id = l.settlement_id and made.run_id = new_run_id
  where l.kind = 'carry' and s.id = l.source_settlement_id;

  perform app_private.enqueue_job('store.payout', jsonb_build_object('settlementId', s.id), now(),
                                  'payout:' || s.id)
  from app.settlements s where s.run_id = new_run_id and s.status = 'pending';

  select count(*)::integer, coalesce(sum(s.order_count), 0)::integer into created, settled
  from app.settlements s where s.run_id = new_run_id;
  update app.settlement_runs r set orders_settled = settled, settlements_created = created
  where r.id = new_run_id;

  return jsonb_build_object(
    'runId', new_run_id,
    'settlements', coalesce((select jsonb_agg(app.settlement_json(s) order by s.vendor_id)
                             from app.settlements s where s.run_id = new_run_id), '[]'::jsonb),
    'orders', settled
  );
end;
$$;

--
-- Name: FUNCTION settle(cut_off timestamp with time zone, started uuid, wait boolean); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.settle(cut_off timestamp with time zone, started uuid, wait boolean) IS 'A settlement run in a few set-based statements: sale lines for the orders delivered or completed and paid by the cut-off and not yet settled (commission per order, rounded half up), refund lines for settled orders refunded since, carry lines for negative settlements, one settlement per vendor (pending when its payout account is active and the net positive, else held; nothing to pay is paid), and a store.payout job per pending settlement. Serialized by an advisory lock (AG409, or waiting when asked); the ledger''s unique keys settle each order once whatever happens.';

--
-- Name: store_currency(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.store_currency() RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return (
    select coalesce(
      (select c.config -> 'store' ->> 'currency' from app.config_versions c order by c.version desc limit 1),
      app_private.config_defaults() -> 'store' ->> 'currency'
    )
  );
end;
$$;

--
-- Name: FUNCTION store_currency(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.store_currency() IS 'The store''s one currency (store.currency of the current configuration, its default otherwise). security definer: the configuration is readable by ADMINs only; it returns one code.';

--
-- Name: submit_wallet_transaction(uuid, bigint, text, text, numeric, numeric); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.submit_wallet_transaction(target_id uuid, signed_nonce bigint, signed_hash text, raw text, signed_max_fee numeric, signed_priority_fee numeric) RETURNS app.wallet_transactions
    LANGUAGE plpgsql
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  updated app.wallet_transactions;
begin
  update app.wallet_transactions t
  set status = 'submitted', nonce = signed_nonce, hash = signed_hash,
      max_fee_per_gas = signed_max_fee, max_priority_fee_per_gas = signed_priority_fee,
      submitted_at = now()
  where t.id = target_id and t.status = 'pending'
  returning * into updated;
  if updated.id is null then
    raise exception 'the transaction is no longer pending' using errcode = 'AG409';
  end if;
  insert into app_private.wallet_signed_transactions (transaction_id, raw) values (target_id, raw);
  perform app_private.enqueue_job('wallet.broadcast', jsonb_build_object('transactionId', target_id),
    now(), 'wallet.broadcast:' || target_id, 25);
  return updated;
end;
$$;

--
-- Name: FUNCTION submit_wallet_transaction(target_id uuid, signed_nonce bigint, signed_hash text, raw text, signed_max_fee numeric, signed_priority_fee numeric); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.submit_wallet_transaction(target_id uuid, signed_nonce bigint, signed_hash text, raw text, signed_max_fee numeric, signed_priority_fee numeric) IS 'Records a signed transfer (nonce, hash, the raw bytes) as submitted and queues its wallet.broadcast job, in the confirm''s transaction: the bytes are stored before anything is sent. Server path only.';

--
-- Name: sync_wallet_nonce(uuid, bigint); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.sync_wallet_nonce(wallet uuid, chain_nonce bigint) RETURNS bigint
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update app_private.wallet_nonces n
  set next_nonce = greatest(n.next_nonce, chain_nonce), updated_at = now()
  where n.wallet_id = wallet
  returning n.next_nonce
$$;

--
-- Name: FUNCTION sync_wallet_nonce(wallet uuid, chain_nonce bigint); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.sync_wallet_nonce(wallet uuid, chain_nonce bigint) IS 'Moves a wallet''s nonce counter up to the chain''s count (never down), after the node said a nonce was taken outside the platform. Server path only.';

--
-- Name: take_deliveries(uuid[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.take_deliveries(notification_ids uuid[]) RETURNS TABLE(delivery_id bigint, attempt_token uuid, channel app_private.delivery_channel, device_token text, platform app.push_platform, email text, notification jsonb, collapse_key text)
    LANGUAGE plpgsql
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
#variable_conflict use_column
declare
  next_at timestamptz;
  waiting uuid[];
begin
  -- A row still in flight was claimed by an attempt that never recorded its outcome (the process
  -- died after sending, or before): it may have gone out, so it is never sent again.
  update app_private.notification_deliveries d
  set status = 'failed', error_code = 'outcome_unknown', finished_at = now(),
      error_message = 'an earlier attempt was interrupted before its outcome was recorded',
      in_flight_since = null, in_flight_token = null
  where d.notification_id = any(notification_ids) and d.status = 'queued' and d.in_flight_since is not null;

  -- Preferences again, at delivery: a channel turned off since, a recipient suspended since, a
  -- device unregistered since; and quiet hours that began since hold the row back again.
  with kinds as (
    -- The defaults of the types at hand only (one call each, not one per row).
    select x.t, app_private.notification_type_defaults(x.t) as defaults
    from (select distinct n.type from app.notifications n where n.id = any(notification_ids)) x (t)
  ), current_state as (
    select d.id,
           case
             when u.status <> 'active' then 'recipient_suspended'
             when d.channel = 'push' and d.device_id is null then 'device_gone'
             when d.channel = 'email' and u.email is null then 'no_email_address'
             when n.priority <> 'critical'
                  and not app_private.wants(p.types, n.type, d.channel::text, k.defaults) then 'preference_off'
           end as refusal,
           case when n.priority <> 'critical'
                then app_private.quiet_until(p.quiet_start, p.quiet_end, p.quiet_time_zone, now()) end as quiet
    from app_private.notification_deliveries d
    join app.notifications n on n.id = d.notification_id
    join app.users u on u.id = n.user_id
    join kinds k on k.t = n.type
    left join app.notification_preferences p on p.user_id = n.user_id
    where d.notification_id = any(notification_ids) and d.status = 'queued' and d.not_before <= now()
  ), refused as (
    update app_private.notification_deliveries d
    set status = 'failed', error_code = c.refusal, finished_at = now(),
        error_message = 'not sent: ' || replace(c.refusal, '_', ' ')
    from current_state c
    where d.id = c.id and c.refusal is not null
    returning d.id
  )
  update app_private.notification_deliveries d set not_before = c.quiet
  from current_state c
  where d.id = c.id and c.refusal is null and c.quiet is not null;

  -- Rows not yet due (quiet hours) get a job of their own for when they are.
  select min(d.not_before), array_agg(distinct d.notification_id) into next_at, waiting
  from app_private.notification_deliveries d
  where d.notification_id = any(notification_ids) and d.status = 'queued' and d.not_before > now();
  if next_at is not null then
    perform app_private.enqueue_job('notifications.deliver',
      jsonb_build_object('notificationIds', to_jsonb(waiting)), next_at,
      'notifications.deliver:' || md5(array_to_string(waiting, ',')) || ':' || extract(epoch from next_at)::text);
  end if;

  return query
  with claimed as (
    update app_private.notification_deliveries d
    set attempts = d.attempts + 1, in_flight_since = now(), in_flight_token = gen_random_uuid()
    where d.id in (
      select x.id from app_private.notification_deliveries x
      where x.notification_id = any(notification_ids) and x.status = 'queued' and x.not_before <= now()
        and x.in_flight_since is null
      for update skip locked
    )
    returning d.id, d.in_flight_token, d.channel, d.device_id, d.notification_id
  )
  select c.id, c.in_flight_token, c.channel, dv.token, dv.platform, u.email,
         app.notification_json(n), n.collapse_key
  from claimed c
  join app.notifications n on n.id = c.notification_id
  join app.users u on u.id = n.user_id
  left join app.push_devices dv on dv.id = c.device_id
  order by c.id;
end;
$$;

--
-- Name: FUNCTION take_deliveries(notification_ids uuid[]); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.take_deliveries(notification_ids uuid[]) IS 'Claims the due deliveries of some notifications for one attempt (attempts + 1, in_flight_since, a fresh attempt token) and returns what sending needs (device token and platform, e-mail address, the notification). Before that: rows an interrupted attempt left in flight fail as outcome_unknown (never sent twice); preferences are checked again (a channel turned off since, a suspended recipient, a device gone: failed with that code); quiet hours that began since hold rows back, with a notifications.deliver job queued for when they end. Server only (the job''s connection).';

--
-- Name: touch_push_device(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.touch_push_device() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  new.updated_at := now();
  return new;
end;
$$;

--
-- Name: FUNCTION touch_push_device(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.touch_push_device() IS 'A device''s updated_at is the time of its last registration.';

--
-- Name: touch_updated_at(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.touch_updated_at() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  new.updated_at := now();
  return new;
end;
$$;

--
-- Name: FUNCTION touch_updated_at(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.touch_updated_at() IS 'Keeps updated_at honest without trusting callers.';

--
-- Name: touch_wallet_transaction(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.touch_wallet_transaction() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  new.updated_at := now();
  return new;
end;
$$;

--
-- Name: FUNCTION touch_wallet_transaction(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.touch_wallet_transaction() IS 'Keeps updated_at on the server''s clock.';

--
-- Name: validate_notification_preferences(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.validate_notification_preferences() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  entry record;
  channel record;
begin
  for entry in select * from jsonb_each(new.types) loop
    if entry.key not in ('OPPORTUNITY', 'MESSAGE', 'ENTITY', 'SYSTEM', 'WALLET') then
      raise exception 'unknown notification type %', entry.key using errcode = 'AG400';
    end if;
    if jsonb_typeof(entry.value) <> 'object' then
      raise exception 'the channels of % are an object', entry.key using errcode = 'AG400';
    end if;
    for channel in select * from jsonb_each(entry.value) loop
      if channel.key not in ('inApp', 'push', 'email') or jsonb_typeof(channel.value) <> 'boolean' then
        raise exception 'the channels of % are inApp, push and email, each true or false', entry.key
          using errcode = 'AG400';
      end if;
    end loop;
  end loop;
  if new.quiet_start is not null then
    if extract(second from new.quiet_start) <> 0 or extract(second from new.quiet_end) <> 0 then
      raise exception 'quiet hours start and end on a minute (HH:MM)' using errcode = 'AG400';
    end if;
    if new.quiet_start = new.quiet_end then
      raise exception 'quiet hours start and end at different times' using errcode = 'AG400';
    end if;
    if tg_op = 'INSERT' or new.quiet_time_zone is distinct from old.quiet_time_zone then
      if not exists (select 1 from pg_catalog.pg_timezone_names z where z.name = new.quiet_time_zone) then
        raise exception 'unknown time zone %', new.quiet_time_zone using errcode = 'AG400';
      end if;
    end if;
  end if;
  new.updated_at := now();
  return new;
end;
$$;

--
-- Name: FUNCTION validate_notification_preferences(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.validate_notification_preferences() IS 'Preferences hold known types and channels with boolean values, and quiet hours on whole minutes, not empty, in a time zone Postgres knows by name (pg_timezone_names, checked only when the zone changes: reading that view costs milliseconds). AG400 otherwise, whatever path wrote the row. security definer: it reads pg_timezone_names whoever writes.';

--
-- Name: wallet_transaction_events(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.wallet_transaction_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  t app.wallet_transactions;
  payload jsonb;
  amount_text text;
  title text;
  body text;
begin
  if tg_op = 'DELETE' then
    -- A row going with its wallet or its owner (an account deletion) is not news to anyone.
    if not exists (
      select 1 from app.wallets w join app.users u on u.id = w.user_id where w.id = old.wallet_id
    ) then
      return null;
    end if;
    t := old;
    t.status := 'failed';
    t.error := 'removed by a chain reorganization';
  else
    t := new;
  end if;
  payload := app.wallet_transaction_json(t);
  perform app_private.emit_event('user:' || t.user_id, 'wallet.transaction.updated', payload);
  amount_text := app_private.format_token_amount(t.amount, t.token_decimals) || ' ' || t.token_symbol;
  if t.direction = 'out' then
    title := case t.status
      when 'pending' then 'Transfer waiting for your confirmation'
      when 'submitted' then 'Transfer sent'
      when 'confirmed' then 'Transfer confirmed'
      when 'failed' then 'Transfer failed'
      when 'expired' then 'Transfer expired'
    end;
    body := case t.status
      when 'pending' then format('Confirm sending %s to %s before it expires.', amount_text, t.to_address)
      when 'submitted' then format('%s to %s is on its way.', amount_text, t.to_address)
      when 'confirmed' then format('%s reached %s.', amount_text, t.to_address)
      when 'failed' then format('%s to %s did not go through: %s', amount_text, t.to_address, coalesce(t.error, 'failed'))
      when 'expired' then format('%s to %s was not confirmed in time; nothing was sent.', amount_text, t.to_address)
    end;
  else
    title := case t.status
      when 'confirmed' then 'Transfer received'
      when 'failed' then 'Incoming transfer reversed'
      else 'Incoming transfer'
    end;
    body := case t.status
      when 'confirmed' then format('%s arrived from %s.', amount_text, t.from_address)
      when 'failed' then format('%s from %s was removed from the chain by a reorganization.', amount_text, t.from_address)
      else format('%s from %s is waiting for confirmations.', amount_text, t.from_address)
    end;
  end if;
  perform app_private.notify(
    t.user_id, 'WALLET', left(title, 200), left(body, 2000),
    jsonb_build_object('transactionId', t.id, 'status', payload ->> 'status', 'direction', t.direction),
    'normal', 'wallet.transaction:' || t.id
  );
  return null;
end;
$$;

--
-- Name: FUNCTION wallet_transaction_events(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.wallet_transaction_events() IS 'wallet.transaction.updated on user:<owner> and a WALLET notification (one per transaction, collapsed, updated at each change) for every new transaction row and every status change; an incoming row deleted by a reorganization is announced as failed (not one deleted with its wallet, as in an account deletion). security definer: it writes the event log and the inbox.';

--
-- Name: wants(jsonb, app.notification_type, text, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.wants(choices jsonb, notification_type app.notification_type, channel text, defaults jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
  select coalesce((choices -> notification_type::text ->> channel)::boolean, (defaults ->> channel)::boolean, false)
$$;

--
-- Name: FUNCTION wants(choices jsonb, notification_type app.notification_type, channel text, defaults jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.wants(choices jsonb, notification_type app.notification_type, channel text, defaults jsonb) IS 'Whether a user wants a type on a channel: their own choice, else the default. Inlinable pure SQL with no pinned search_path on purpose (see app.notification_json), so the send''s hot path pays no call per recipient.';

--
-- Name: write_notification_batch(uuid, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.write_notification_batch(target_batch_id uuid, chunk_size integer DEFAULT 1000) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  b app.notification_batches;
  defaults jsonb;
  critical boolean;
  chunk_count integer;
begin
  select * into b from app.notification_batches where id = target_batch_id for update;
  if not found then
    raise exception 'batch not found' using errcode = 'AG404';
  end if;
  if b.status = 'done' then
    return coalesce(b.chunks, 0);
  end if;
  update app.notification_batches set status = 'sending', started_at = coalesce(started_at, now())
  where id = b.id;
  defaults := app_private.notification_type_defaults(b.type);
  critical := b.priority = 'critical';

  -- The whole batch's inbox in one INSERT ... SELECT; a rerun (the drain crashed after commit)
  -- writes nothing twice: (batch_id, user_id) is unique.
  with decided as (
    select u.id as uid,
           'inApp' = any(b.channels) and (critical or app_private.wants(p.types, b.type, 'inApp', defaults)) as want_inbox,
           'push' = any(b.channels) and (critical or app_private.wants(p.types, b.type, 'push', defaults)) as want_push,
           'email' = any(b.channels) and u.email is not null
             and (critical or app_private.wants(p.types, b.type, 'email', defaults)) as want_email,
           case when not critical
                then app_private.quiet_until(p.quiet_start, p.quiet_end, p.quiet_time_zone, now()) end as quiet_until
    from app.users u
    left join app.notification_preferences p on p.user_id = u.id
    where app_private.in_audience(u, b.audience) and u.created_at <= b.created_at
  ), written as (
    insert into app.notifications (user_id, type, title, body, data, priority, batch_id, inbox)
    select d.uid, b.type, b.title, b.body, b.data, b.priority, b.id, d.want_inbox from decided d
    on conflict do nothing
    returning id, user_id
  ), pushes as (
    insert into app_private.notification_deliveries (notification_id, channel, device_id, not_before)
    select w.id, 'push', dv.id, coalesce(d.quiet_until, now())
    from written w join decided d on d.uid = w.user_id join app.push_devices dv on dv.user_id = w.user_id
    where d.want_push
  )
  insert into app_private.notification_deliveries (notification_id, channel, not_before)
  select w.id, 'email', coalesce(d.quiet_until, now())
  from written w join decided d on d.uid = w.user_id
  where d.want_email;

  -- Its recipients in user-id ranges of chunk_size: one job each for events and deliveries.
  insert into app_private.notification_batch_chunks (batch_id, chunk, first_user_id, last_user_id)
  select b.id, x.chunk, (array_agg(x.user_id order by x.user_id))[1],
         (array_agg(x.user_id order by x.user_id desc))[1]
  from (
    select n.user_id, ((row_number() over (order by n.user_id)) - 1) / chunk_size as chunk
    from app.notifications n where n.batch_id = b.id
  ) x
  group by x.chunk
  on conflict do nothing;
  select count(*)::integer into chunk_count from app_private.notification_batch_chunks c where c.batch_id = b.id;
  update app.notification_batches
  set chunks = chunk_count,
      status = case when chunk_count = 0 then 'done' else 'sending' end::app.notification_batch_status,
      finished_at = case when chunk_count = 0 then now() end
  where id = b.id;
  perform app_private.enqueue_job('notifications.batch_chunk',
            jsonb_build_object('batchId', b.id, 'chunk', c.chunk), now(),
            'notifications.batch_chunk:' || b.id::text || ':' || c.chunk::text)
  from app_private.notification_batch_chunks c
  where c.batch_id = b.id and c.done_at is null;
  return chunk_count;
end;
$$;

--
-- Name: FUNCTION write_notification_batch(target_batch_id uuid, chunk_size integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.write_notification_batch(target_batch_id uuid, chunk_size integer) IS 'The notifications.batch job: writes a batch''s inbox in one INSERT ... SELECT over its audience (active users who existed when it was accepted), with each recipient''s preferences (the batch''s channels, then the user''s choices and quiet hours, critical bypassing them) and the push and e-mail delivery rows, then splits the recipients into user-id ranges and queues one notifications.batch_chunk job per range. Idempotent: (batch_id, user_id) is unique and chunks and jobs are keyed. security definer: it writes every recipient''s inbox.';

--
-- Name: access_logs; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.access_logs (
    id bigint NOT NULL,
    request_id text NOT NULL,
    user_id uuid,
    method text NOT NULL,
    route text NOT NULL,
    status smallint NOT NULL,
    duration_ms real NOT NULL,
    ip inet,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: TABLE access_logs; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.access_logs IS 'One row per /api request, written in batches off the request path by the server only. No foreign key on user_id: checking it cost a row lock per logged request, and a log keeps the id it saw.';

--
-- Name: access_logs_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.access_logs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.access_logs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: chain_tokens; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.chain_tokens (
    chain_id integer NOT NULL,
    address text NOT NULL,
    symbol text NOT NULL,
    name text NOT NULL,
    decimals smallint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chain_tokens_address_check CHECK ((address ~ '^0x[0-9a-fA-F]{40}$'::text)),
    CONSTRAINT chain_tokens_chain_id_check CHECK ((chain_id > 0)),
    CONSTRAINT chain_tokens_decimals_check CHECK (((decimals >= 0) AND (decimals <= 77))),
    CONSTRAINT chain_tokens_name_check CHECK (((char_length(name) >= 1) AND (char_length(name) <= 200))),
    CONSTRAINT chain_tokens_symbol_check CHECK (((char_length(symbol) >= 1) AND (char_length(symbol) <= 64)))
);

--
-- Name: TABLE chain_tokens; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.chain_tokens IS 'ERC-20 tokens as the chain describes them (symbol, name, decimals), read and checked once by the server: the platform''s tokens and every token a user added. Public chain data, readable from SUBSCRIBER up.';

--
-- Name: checkouts; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.checkouts (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    buyer_id uuid,
    total bigint NOT NULL,
    currency text NOT NULL,
    provider text NOT NULL,
    payment_intent_id text,
    payment_status app.payment_status DEFAULT 'pending'::app.payment_status NOT NULL,
    idempotency_key text,
    reserved_until timestamp with time zone NOT NULL,
    closed_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT checkouts_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT checkouts_idempotency_key_check CHECK (((char_length(idempotency_key) >= 1) AND (char_length(idempotency_key) <= 255))),
    CONSTRAINT checkouts_payment_intent_id_check CHECK (((char_length(payment_intent_id) >= 1) AND (char_length(payment_intent_id) <= 255))),
    CONSTRAINT checkouts_provider_check CHECK ((provider = ANY (ARRAY['stripe'::text, 'dev'::text]))),
    CONSTRAINT checkouts_total_check CHECK ((total > 0))
);

--
-- Name: TABLE checkouts; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.checkouts IS 'The orders a buyer pays together: one PaymentIntent (transfer_group = this id) for their total. reserved_until is when unpaid stock goes back; closed_at is set once no order of it awaits payment. Written only by the order functions.';

--
-- Name: config_versions; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.config_versions (
    version integer NOT NULL,
    config jsonb NOT NULL,
    diff jsonb DEFAULT '{}'::jsonb NOT NULL,
    reason text NOT NULL,
    changed_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT config_versions_reason_check CHECK (((char_length(reason) >= 1) AND (char_length(reason) <= 500))),
    CONSTRAINT config_versions_version_check CHECK ((version > 0))
);

--
-- Name: TABLE config_versions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.config_versions IS 'Versioned system configuration: every version kept, the highest is current, and a stored document may be partial (app_private.config_defaults fills the rest). The primary key is the optimistic lock: two writers that read version N cannot both write N + 1.';

--
-- Name: conversation_participants; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.conversation_participants (
    conversation_id uuid NOT NULL,
    user_id uuid NOT NULL,
    added_by uuid,
    joined_at timestamp with time zone DEFAULT now() NOT NULL,
    last_read_seq bigint DEFAULT 0 NOT NULL,
    last_read_message_id uuid,
    last_read_at timestamp with time zone
);

--
-- Name: TABLE conversation_participants; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.conversation_participants IS 'Who takes part in a conversation, and each one''s read watermark (only moves forward).';

--
-- Name: conversations; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.conversations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    type app.conversation_type NOT NULL,
    title text,
    created_by uuid,
    direct_key text,
    last_seq bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_activity_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT conversations_direct_key CHECK (((type = 'direct'::app.conversation_type) = (direct_key IS NOT NULL))),
    CONSTRAINT conversations_direct_untitled CHECK (((type = 'group'::app.conversation_type) OR (title IS NULL))),
    CONSTRAINT conversations_title_check CHECK (((char_length(title) >= 1) AND (char_length(title) <= 200)))
)
WITH (fillfactor='70');

--
-- Name: TABLE conversations; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.conversations IS 'Direct and group conversations. last_seq hands out message numbers under the row''s lock (commit order within a conversation); direct_key keeps one direct conversation per pair. Unindexed activity columns and fillfactor 70 keep the per-message update HOT.';

--
-- Name: events; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.events (
    id bigint NOT NULL,
    xid xid8 DEFAULT pg_current_xact_id() NOT NULL,
    topic text NOT NULL,
    event text NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT events_event_check CHECK ((event ~ '^[a-z_]+(\.[a-z_]+)*$'::text)),
    CONSTRAINT events_topic_check CHECK (((char_length(topic) >= 1) AND (char_length(topic) <= 200)))
);

--
-- Name: TABLE events; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.events IS 'Durable realtime events, read in (xid, id) order below the running-transaction horizon so a cursor never skips or repeats, whatever order concurrent writers commit in.';

--
-- Name: events_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: identities; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.identities (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    provider text NOT NULL,
    provider_user_id text NOT NULL,
    email text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT identities_provider_check CHECK ((provider = ANY (ARRAY['email'::text, 'google'::text, 'apple'::text, 'wallet'::text]))),
    CONSTRAINT identities_provider_user_id_check CHECK (((char_length(provider_user_id) >= 1) AND (char_length(provider_user_id) <= 320)))
);

--
-- Name: TABLE identities; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.identities IS 'How a person proves who they are: one row per provider account (email, google, apple, wallet).';

--
-- Name: message_versions; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.message_versions (
    id bigint NOT NULL,
    message_id uuid NOT NULL,
    content text NOT NULL,
    written_at timestamp with time zone NOT NULL,
    replaced_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: TABLE message_versions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.message_versions IS 'Earlier contents of edited messages: the history an edit must not erase.';

--
-- Name: message_versions_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.message_versions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.message_versions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: notification_batches; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.notification_batches (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    created_by uuid,
    idempotency_key text,
    request_hash text,
    audience jsonb NOT NULL,
    type app.notification_type NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    data jsonb DEFAULT '{}'::jsonb NOT NULL,
    priority app.notification_priority DEFAULT 'normal'::app.notification_priority NOT NULL,
    channels text[] NOT NULL,
    status app.notification_batch_status DEFAULT 'queued'::app.notification_batch_status NOT NULL,
    recipients integer DEFAULT 0 NOT NULL,
    chunks integer,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    CONSTRAINT notification_batches_audience_check CHECK ((jsonb_typeof(audience) = 'object'::text)),
    CONSTRAINT notification_batches_body_check CHECK ((char_length(body) <= 2000)),
    CONSTRAINT notification_batches_channels_check CHECK ((((cardinality(channels) >= 1) AND (cardinality(channels) <= 3)) AND (channels <@ ARRAY['inApp'::text, 'push'::text, 'email'::text]))),
    CONSTRAINT notification_batches_chunks_check CHECK ((chunks >= 0)),
    CONSTRAINT notification_batches_data_check CHECK ((jsonb_typeof(data) = 'object'::text)),
    CONSTRAINT notification_batches_idempotency_key_check CHECK (((char_length(idempotency_key) >= 1) AND (char_length(idempotency_key) <= 255))),
    CONSTRAINT notification_batches_recipients_check CHECK ((recipients >= 0)),
    CONSTRAINT notification_batches_title_check CHECK (((char_length(title) >= 1) AND (char_length(title) <= 200)))
);

--
-- Name: TABLE notification_batches; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.notification_batches IS 'Bulk sends by ADMINs: the request (audience, notification, channels), its Idempotency-Key and progress. Written only through app.create_notification_batch and the batch jobs; ADMINs read them.';

--
-- Name: notification_counters; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.notification_counters (
    user_id uuid NOT NULL,
    unread integer DEFAULT 0 NOT NULL,
    CONSTRAINT notification_counters_unread_check CHECK ((unread >= 0))
);

--
-- Name: TABLE notification_counters; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.notification_counters IS 'Each user''s unread inbox notifications, kept by the triggers on app.notifications (insert: a statement trigger adding the new unread inbox rows per user; read and delete: row triggers), so GET /api/notifications reads one row instead of counting. Users read their own.';

--
-- Name: notification_preferences; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.notification_preferences (
    user_id uuid NOT NULL,
    types jsonb DEFAULT '{}'::jsonb NOT NULL,
    quiet_start time without time zone,
    quiet_end time without time zone,
    quiet_time_zone text,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT notification_preferences_quiet_together CHECK ((((quiet_start IS NULL) = (quiet_end IS NULL)) AND ((quiet_start IS NULL) = (quiet_time_zone IS NULL)))),
    CONSTRAINT notification_preferences_types_check CHECK ((jsonb_typeof(types) = 'object'::text))
);

--
-- Name: TABLE notification_preferences; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.notification_preferences IS 'A user''s own choices: per type and channel ({ TYPE: { inApp, push, email } }, only what was chosen) and quiet hours (HH:MM to HH:MM in an IANA time zone, possibly across midnight) that hold push and e-mail back. Users read and write their own row; a trigger validates it.';

--
-- Name: order_history; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.order_history (
    id bigint NOT NULL,
    order_id uuid NOT NULL,
    from_status app.order_status,
    to_status app.order_status NOT NULL,
    actor app.order_actor NOT NULL,
    actor_id uuid,
    reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT order_history_reason_check CHECK ((char_length(reason) <= 1000))
);

--
-- Name: TABLE order_history; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.order_history IS 'Every move of an order (the first row is its creation, from null), who made it and why. Append-only: written by app_private.move_order and the checkout.';

--
-- Name: order_history_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.order_history ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.order_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: order_items; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.order_items (
    order_id uuid NOT NULL,
    product_id uuid NOT NULL,
    title text NOT NULL,
    unit_price bigint NOT NULL,
    quantity integer NOT NULL,
    total bigint NOT NULL,
    CONSTRAINT order_items_quantity_check CHECK (((quantity >= 1) AND (quantity <= 1000))),
    CONSTRAINT order_items_total CHECK ((total = (unit_price * quantity))),
    CONSTRAINT order_items_unit_price_check CHECK ((unit_price > 0))
);

--
-- Name: TABLE order_items; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.order_items IS 'What an order holds, with the title and unit price taken from the product by the server at checkout (a client''s prices are never read).';

--
-- Name: order_transitions; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.order_transitions (
    from_status app.order_status NOT NULL,
    to_status app.order_status NOT NULL,
    actor app.order_actor NOT NULL
);

--
-- Name: TABLE order_transitions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.order_transitions IS 'The order state machine as data, exactly the contract''s table: each allowed move and each actor who may make it. app.change_order_status and app_private.move_order accept nothing else.';

--
-- Name: push_devices; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.push_devices (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    token text NOT NULL,
    platform app.push_platform NOT NULL,
    device_name text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT push_devices_device_name_check CHECK ((char_length(device_name) <= 200)),
    CONSTRAINT push_devices_token_check CHECK (((char_length(token) >= 1) AND (char_length(token) <= 1024)))
);

--
-- Name: TABLE push_devices; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.push_devices IS 'FCM registration tokens, one row per token. A token registered by another user moves to that user (a new row, so deliveries queued for the previous owner never reach the new one). Deleted when FCM says the token is unregistered or invalid. Users see their own devices but never a token (no column grant); registration goes through app.register_push_device.';

--
-- Name: refunds; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.refunds (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    order_id uuid NOT NULL,
    amount bigint NOT NULL,
    currency text NOT NULL,
    status app.refund_status DEFAULT 'pending'::app.refund_status NOT NULL,
    reason text,
    requested_by uuid,
    provider_refund_id text,
    failure_reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    succeeded_at timestamp with time zone,
    CONSTRAINT refunds_amount_check CHECK ((amount > 0)),
    CONSTRAINT refunds_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT refunds_reason_check CHECK ((char_length(reason) <= 1000))
);

--
-- Name: TABLE refunds; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.refunds IS 'A refund owed to a buyer for one order (at most one per order: the unique key), made through the payment provider by a store.refund job with the idempotency key refund:<orderId>.';

--
-- Name: role_changes_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.role_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.role_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: security_events; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.security_events (
    id bigint NOT NULL,
    type text NOT NULL,
    severity app.security_severity DEFAULT 'info'::app.security_severity NOT NULL,
    user_id uuid,
    ip inet,
    user_agent text,
    details jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT security_events_type_check CHECK ((type ~ '^[a-z_]+(\.[a-z_]+)*$'::text))
);

--
-- Name: TABLE security_events; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.security_events IS 'What an admin needs to see of security (sign-ins, token reuse, denials, role changes); written by the server only.';

--
-- Name: security_events_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.security_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.security_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: sessions; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.sessions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    provider text NOT NULL,
    ip inet,
    user_agent text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    refreshed_at timestamp with time zone,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    revoked_reason text,
    authenticated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT sessions_revoked_reason_check CHECK ((char_length(revoked_reason) <= 200)),
    CONSTRAINT sessions_user_agent_check CHECK ((char_length(user_agent) <= 1024))
);

--
-- Name: TABLE sessions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.sessions IS 'A signed-in device. Every request checks its row, so revoking it kills its access tokens at once; a revoked or expired session authenticates nothing.';

--
-- Name: COLUMN sessions.provider; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON COLUMN app.sessions.provider IS 'How the session was opened: email, google, apple or wallet (the access token''s amr).';

--
-- Name: COLUMN sessions.authenticated_at; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON COLUMN app.sessions.authenticated_at IS 'When the person proved who they are for this session (the sign-in that opened it): the access token''s auth_time, unchanged by refreshes. A sign-in is fresh while this is within security.freshSignInSeconds.';

--
-- Name: settlement_lines; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.settlement_lines (
    id bigint NOT NULL,
    settlement_id uuid NOT NULL,
    vendor_id uuid NOT NULL,
    kind text NOT NULL,
    order_id uuid,
    source_settlement_id uuid,
    amount bigint NOT NULL,
    commission bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT settlement_lines_amount_check CHECK ((amount >= 0)),
    CONSTRAINT settlement_lines_commission_check CHECK ((commission >= 0)),
    CONSTRAINT settlement_lines_kind_check CHECK ((kind = ANY (ARRAY['sale'::text, 'refund'::text, 'carry'::text]))),
    CONSTRAINT settlement_lines_shape CHECK ((((kind = 'carry'::text) = (source_settlement_id IS NOT NULL)) AND ((kind = 'carry'::text) = (order_id IS NULL))))
);

--
-- Name: TABLE settlement_lines; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.settlement_lines IS 'The append-only ledger behind settlements: a sale line per settled order (with its commission), a refund line per settled order refunded later, a carry line per negative settlement carried forward. The unique keys (order_id, kind) and (source_settlement_id) make each order settled exactly once and each deduction made once, under any concurrency; a trigger refuses updates and deletes.';

--
-- Name: settlement_lines_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.settlement_lines ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.settlement_lines_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: settlement_runs; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.settlement_runs (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    as_of timestamp with time zone NOT NULL,
    started_by uuid,
    orders_settled integer DEFAULT 0 NOT NULL,
    settlements_created integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: TABLE settlement_runs; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.settlement_runs IS 'Each settlement run: its cut-off, who started it (null: the schedule) and what it settled.';

--
-- Name: status_changes_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.status_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.status_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: vendor_decisions; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.vendor_decisions (
    id bigint NOT NULL,
    vendor_id uuid NOT NULL,
    from_status app.vendor_status NOT NULL,
    to_status app.vendor_status NOT NULL,
    reason text NOT NULL,
    commission_bps integer,
    decided_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT vendor_decisions_commission_bps_check CHECK (((commission_bps >= 0) AND (commission_bps <= 10000))),
    CONSTRAINT vendor_decisions_reason_check CHECK (((char_length(btrim(reason)) >= 1) AND (char_length(btrim(reason)) <= 1000)))
);

--
-- Name: TABLE vendor_decisions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.vendor_decisions IS 'Every ADMIN decision on a vendor (approve, reject, suspend, reinstate, a commission change) with its reason: the history the owner and ADMINs read. Written only by app.set_vendor_status, never updated.';

--
-- Name: vendor_decisions_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.vendor_decisions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.vendor_decisions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: wallet_nfts; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.wallet_nfts (
    wallet_id uuid NOT NULL,
    user_id uuid NOT NULL,
    chain_id integer NOT NULL,
    contract text NOT NULL,
    token_id numeric(78,0) NOT NULL,
    standard app.nft_standard NOT NULL,
    balance numeric(78,0) NOT NULL,
    token_uri text,
    name text,
    image text,
    collection_name text,
    collection_symbol text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT wallet_nfts_balance_check CHECK ((balance > (0)::numeric)),
    CONSTRAINT wallet_nfts_contract_check CHECK ((contract ~ '^0x[0-9a-fA-F]{40}$'::text)),
    CONSTRAINT wallet_nfts_token_id_check CHECK ((token_id >= (0)::numeric))
);

--
-- Name: TABLE wallet_nfts; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.wallet_nfts IS 'What each wallet holds of the configured NFT collections, computed from their transfer logs (app_private.nft_transfers) by the follower, with the token''s metadata. Owners read their own.';

--
-- Name: wallet_tokens; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.wallet_tokens (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    chain_id integer NOT NULL,
    address text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: TABLE wallet_tokens; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.wallet_tokens IS 'The custom ERC-20s each user follows (besides native currency and the platform''s tokens, which everyone has); added only after the server checked the contract on the chain.';

--
-- Name: account_erasure_steps; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.account_erasure_steps (
    domain text NOT NULL,
    function_name regprocedure NOT NULL,
    "position" integer NOT NULL,
    description text NOT NULL,
    CONSTRAINT account_erasure_steps_description_check CHECK (((char_length(description) >= 1) AND (char_length(description) <= 500))),
    CONSTRAINT account_erasure_steps_domain_check CHECK ((domain ~ '^[a-z][a-z_]*$'::text))
);

--
-- Name: TABLE account_erasure_steps; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.account_erasure_steps IS 'The one list of what an account deletion does beyond the foreign keys, one step per domain, run in position order by app.delete_account before the user row is deleted.';

--
-- Name: account_export_parts; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.account_export_parts (
    part text NOT NULL,
    function_name regprocedure NOT NULL,
    description text NOT NULL,
    CONSTRAINT account_export_parts_description_check CHECK (((char_length(description) >= 1) AND (char_length(description) <= 500))),
    CONSTRAINT account_export_parts_part_check CHECK ((part ~ '^[a-z][A-Za-z]*$'::text))
);

--
-- Name: TABLE account_export_parts; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.account_export_parts IS 'The one list of the account export''s parts: the document key and the function (user_id uuid) returning jsonb that fills it. A domain adds its row in its migration; tests/account/sql/430-account-export.sql checks that every account_export_* function is listed and that no part holds a secret.';

--
-- Name: catalog_counts; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.catalog_counts (
    vendor_id uuid NOT NULL,
    category text NOT NULL,
    in_stock boolean NOT NULL,
    products integer NOT NULL
);

--
-- Name: TABLE catalog_counts; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.catalog_counts IS 'Active products per vendor, category and whether any is available: what the facets of the unsearched catalog sum (app.search_products), kept by the statement triggers on app.products. Server only: read inside the security definer search. (No check on products >= 0: an upsert checks a row before it finds its conflict, so a negative delta could not be applied.)';

--
-- Name: catalog_words; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.catalog_words (
    word text NOT NULL,
    CONSTRAINT catalog_words_word_check CHECK (((char_length(word) >= 3) AND (char_length(word) <= 40)))
);

--
-- Name: TABLE catalog_words; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.catalog_words IS 'Every word (3 to 40 letters) of product titles and tags: the vocabulary misspelt searches are corrected against (app_private.correct_spelling). Only added to, by the products write trigger when a text changes; a word whose products are gone stays (a correction to it then finds nothing). Server only.';

--
-- Name: chain_blocks; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.chain_blocks (
    chain_id integer NOT NULL,
    number bigint NOT NULL,
    hash text NOT NULL,
    parent_hash text NOT NULL,
    indexed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chain_blocks_hash_check CHECK ((hash ~ '^0x[0-9a-f]{64}$'::text)),
    CONSTRAINT chain_blocks_number_check CHECK ((number >= 0)),
    CONSTRAINT chain_blocks_parent_hash_check CHECK ((parent_hash ~ '^0x[0-9a-f]{64}$'::text))
);

--
-- Name: TABLE chain_blocks; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.chain_blocks IS 'The hashes of the last blocks the follower indexed (the last 128), to find where the chain forked when a reorganization replaced them.';

--
-- Name: chain_cursors; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.chain_cursors (
    chain_id integer NOT NULL,
    block_number bigint NOT NULL,
    block_hash text,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chain_cursors_block_number_check CHECK ((block_number >= '-1'::integer))
);

--
-- Name: TABLE chain_cursors; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.chain_cursors IS 'Where the chain follower stands: the last block it indexed and that block''s hash. Moved with a compare-and-set, so two followers never index the same blocks; a restart resumes here.';

--
-- Name: chain_heads; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.chain_heads (
    chain_id integer NOT NULL,
    block_number bigint NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chain_heads_block_number_check CHECK ((block_number >= 0))
);

--
-- Name: TABLE chain_heads; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.chain_heads IS 'The highest block seen by the follower or a transaction watcher: what confirmations are counted against.';

--
-- Name: checkout_secrets; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.checkout_secrets (
    checkout_id uuid NOT NULL,
    client_secret text NOT NULL
);

--
-- Name: TABLE checkout_secrets; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.checkout_secrets IS 'The PaymentIntent''s client secret, which lets its holder confirm the payment: given to the buyer in the checkout answer only, never readable through RLS.';

--
-- Name: dev_payment_objects; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.dev_payment_objects (
    id text NOT NULL,
    object text NOT NULL,
    data jsonb NOT NULL,
    idempotency_key text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT dev_payment_objects_id_check CHECK (((char_length(id) >= 1) AND (char_length(id) <= 255))),
    CONSTRAINT dev_payment_objects_idempotency_key_check CHECK (((char_length(idempotency_key) >= 1) AND (char_length(idempotency_key) <= 300))),
    CONSTRAINT dev_payment_objects_object_check CHECK ((object = ANY (ARRAY['payment_intent'::text, 'refund'::text, 'account'::text, 'transfer'::text])))
);

--
-- Name: TABLE dev_payment_objects; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.dev_payment_objects IS 'The dev payment provider''s state, used only when no Stripe key is configured: Stripe-shaped payment intents, refunds, accounts and transfers, so the local stack checks out and pays out end to end (POST /_dev/payments/<id>/succeed|fail). The idempotency key replays the first object, as Stripe''s does.';

--
-- Name: idempotency_keys; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.idempotency_keys (
    user_id uuid NOT NULL,
    key text NOT NULL,
    scope text NOT NULL,
    request_hash text NOT NULL,
    response jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT idempotency_keys_key_check CHECK (((char_length(key) >= 1) AND (char_length(key) <= 255)))
);

--
-- Name: TABLE idempotency_keys; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.idempotency_keys IS 'Idempotency keys per user with the request''s hash and its first response, replayed for 24 h.';

--
-- Name: jobs_id_seq; Type: SEQUENCE; Schema: app_private; Owner: -
--

ALTER TABLE app_private.jobs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: magic_links; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.magic_links (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text NOT NULL,
    token_hash text NOT NULL,
    redirect_to text,
    ip inet,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone
);

--
-- Name: TABLE magic_links; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.magic_links IS 'Magic-link tokens as SHA-256 hashes: single use, short-lived; a leaked table signs nobody in.';

--
-- Name: message_digests; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.message_digests (
    conversation_id uuid NOT NULL,
    digested_seq bigint DEFAULT 0 NOT NULL,
    digested_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT message_digests_digested_seq_check CHECK ((digested_seq >= 0))
);

--
-- Name: TABLE message_digests; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.message_digests IS 'How far each conversation''s messages were told to its participants'' inboxes (the last message seq a digest covered). Server only.';

--
-- Name: message_digests_pending; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.message_digests_pending (
    conversation_id uuid NOT NULL,
    marked_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: TABLE message_digests_pending; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.message_digests_pending IS 'Conversations with messages waiting for their digest (the MESSAGE notifications of the other participants): one row while any wait. Server only.';

--
-- Name: nft_collections; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.nft_collections (
    chain_id integer NOT NULL,
    contract text NOT NULL,
    standard app.nft_standard NOT NULL,
    name text,
    symbol text
);

--
-- Name: TABLE nft_collections; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.nft_collections IS 'Name and symbol of each indexed NFT collection, read once from the chain.';

--
-- Name: nft_tokens; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.nft_tokens (
    chain_id integer NOT NULL,
    contract text NOT NULL,
    token_id numeric(78,0) NOT NULL,
    token_uri text,
    name text,
    image text,
    fetched_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: TABLE nft_tokens; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.nft_tokens IS 'Token URI metadata per NFT, read once from the chain (data: URIs decoded; other URIs kept for clients to fetch).';

--
-- Name: nft_transfers; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.nft_transfers (
    chain_id integer NOT NULL,
    block_number bigint NOT NULL,
    block_hash text NOT NULL,
    transaction_hash text NOT NULL,
    log_index integer NOT NULL,
    batch_index integer DEFAULT 0 NOT NULL,
    standard app.nft_standard NOT NULL,
    contract text NOT NULL,
    token_id numeric(78,0) NOT NULL,
    from_address text NOT NULL,
    to_address text NOT NULL,
    amount numeric(78,0) NOT NULL,
    CONSTRAINT nft_transfers_amount_check CHECK ((amount >= (0)::numeric)),
    CONSTRAINT nft_transfers_token_id_check CHECK ((token_id >= (0)::numeric))
);

--
-- Name: TABLE nft_transfers; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.nft_transfers IS 'ERC-721 Transfer and ERC-1155 TransferSingle/TransferBatch logs of the configured collections that involve a platform wallet: the source holdings are computed from, and what a reorganization rolls back.';

--
-- Name: notification_batch_chunks; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.notification_batch_chunks (
    batch_id uuid NOT NULL,
    chunk integer NOT NULL,
    first_user_id uuid NOT NULL,
    last_user_id uuid NOT NULL,
    announced_at timestamp with time zone,
    done_at timestamp with time zone,
    CONSTRAINT notification_batch_chunks_chunk_check CHECK ((chunk >= 0))
);

--
-- Name: TABLE notification_batch_chunks; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.notification_batch_chunks IS 'A bulk batch''s recipients in user-id ranges, one job per range: its live events (once, announced_at) and its deliveries. Server only.';

--
-- Name: notification_deliveries; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.notification_deliveries (
    id bigint NOT NULL,
    notification_id uuid NOT NULL,
    channel app_private.delivery_channel NOT NULL,
    device_id uuid,
    status app_private.delivery_status DEFAULT 'queued'::app_private.delivery_status NOT NULL,
    not_before timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    in_flight_since timestamp with time zone,
    in_flight_token uuid,
    error_code text,
    error_message text,
    provider_message_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    CONSTRAINT notification_deliveries_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT notification_deliveries_email_has_no_device CHECK (((channel = 'push'::app_private.delivery_channel) OR (device_id IS NULL))),
    CONSTRAINT notification_deliveries_error_code_check CHECK ((char_length(error_code) <= 100)),
    CONSTRAINT notification_deliveries_error_message_check CHECK ((char_length(error_message) <= 1000)),
    CONSTRAINT notification_deliveries_finished CHECK (((status = 'queued'::app_private.delivery_status) = (finished_at IS NULL))),
    CONSTRAINT notification_deliveries_in_flight CHECK (((in_flight_since IS NULL) = (in_flight_token IS NULL))),
    CONSTRAINT notification_deliveries_provider_message_id_check CHECK ((char_length(provider_message_id) <= 500))
);

--
-- Name: TABLE notification_deliveries; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.notification_deliveries IS 'Push and e-mail deliveries: one per notification and device (push) or per notification (e-mail), with status, attempts, FCM''s error code and message name. Server only.';

--
-- Name: notification_deliveries_id_seq; Type: SEQUENCE; Schema: app_private; Owner: -
--

ALTER TABLE app_private.notification_deliveries ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.notification_deliveries_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: oauth_flows; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.oauth_flows (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    provider text NOT NULL,
    state_hash text NOT NULL,
    nonce_hash text NOT NULL,
    code_verifier text,
    binding_hash text,
    client_challenge text,
    redirect_to text,
    link_user_id uuid,
    ip inet,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    exchange_code_hash text,
    exchange_expires_at timestamp with time zone,
    exchanged_at timestamp with time zone,
    result_identity jsonb,
    result_authenticated_at timestamp with time zone,
    CONSTRAINT oauth_flows_bound CHECK (((binding_hash IS NULL) <> (client_challenge IS NULL))),
    CONSTRAINT oauth_flows_client_challenge_check CHECK ((client_challenge ~ '^[A-Za-z0-9_-]{43}$'::text)),
    CONSTRAINT oauth_flows_code_verifier_check CHECK (((char_length(code_verifier) >= 43) AND (char_length(code_verifier) <= 128))),
    CONSTRAINT oauth_flows_exchange CHECK ((((exchange_code_hash IS NULL) = (exchange_expires_at IS NULL)) AND ((exchange_code_hash IS NULL) = (result_authenticated_at IS NULL)) AND ((exchange_code_hash IS NULL) OR (client_challenge IS NOT NULL)) AND ((result_identity IS NULL) OR (exchange_code_hash IS NOT NULL)))),
    CONSTRAINT oauth_flows_provider_check CHECK ((provider = ANY (ARRAY['google'::text, 'apple'::text]))),
    CONSTRAINT oauth_flows_redirect_to_check CHECK ((char_length(redirect_to) <= 2048)),
    CONSTRAINT oauth_flows_result_identity_check CHECK ((jsonb_typeof(result_identity) = 'object'::text))
);

--
-- Name: TABLE oauth_flows; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.oauth_flows IS 'OAuth sign-ins in progress (Google, Apple): hashes of state and nonce, the PKCE verifier until the callback, the browser binding (hash of a cookie value) or the integrator''s PKCE challenge, where to send the browser afterwards and, for an explicit link, the signed-in user. Single use, ten minutes. An integrator flow''s verified identity waits here (result_identity) behind a single-use exchange code: which account it signs in to, or links to, is decided only when the holder of the verifier exchanges it, and the identity is cleared then. Server only.';

--
-- Name: rate_limits; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.rate_limits (
    bucket text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    hits integer DEFAULT 0 NOT NULL
);

--
-- Name: TABLE rate_limits; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.rate_limits IS 'Fixed-window rate-limit counters, in the database so limits hold across many stateless API instances.';

--
-- Name: refresh_tokens; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.refresh_tokens (
    id bigint NOT NULL,
    session_id uuid NOT NULL,
    token_hash text NOT NULL,
    parent_id bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    spent_at timestamp with time zone
);

--
-- Name: TABLE refresh_tokens; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.refresh_tokens IS 'Opaque refresh tokens as SHA-256 hashes. parent_id links each to the one it replaced: that is how reuse of a spent token is told apart from the grace allowed to its parent.';

--
-- Name: refresh_tokens_id_seq; Type: SEQUENCE; Schema: app_private; Owner: -
--

ALTER TABLE app_private.refresh_tokens ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.refresh_tokens_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: siwe_nonces; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.siwe_nonces (
    nonce_hash text NOT NULL,
    ip inet,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone
);

--
-- Name: TABLE siwe_nonces; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.siwe_nonces IS 'Nonces handed out by GET /api/auth/nonce for Sign-In with Ethereum, as SHA-256 hashes: single use (spent by one conditional update when a signed message is accepted), ten minutes. Server only.';

--
-- Name: stripe_events; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.stripe_events (
    id text NOT NULL,
    type text NOT NULL,
    livemode boolean DEFAULT false NOT NULL,
    payload jsonb NOT NULL,
    received_at timestamp with time zone DEFAULT now() NOT NULL,
    processed_at timestamp with time zone,
    outcome text,
    CONSTRAINT stripe_events_id_check CHECK (((char_length(id) >= 1) AND (char_length(id) <= 255))),
    CONSTRAINT stripe_events_type_check CHECK (((char_length(type) >= 1) AND (char_length(type) <= 255)))
);

--
-- Name: TABLE stripe_events; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.stripe_events IS 'Every verified webhook event of the payment provider, once: the primary key is the event id, so a replayed delivery inserts nothing and queues nothing. processed_at and outcome are set by the store.stripe_event job.';

--
-- Name: wallet_keys; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.wallet_keys (
    wallet_id uuid NOT NULL,
    scheme text DEFAULT 'v1'::text NOT NULL,
    key_id text NOT NULL,
    wrapped_data_key bytea NOT NULL,
    encrypted_private_key bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    rewrapped_at timestamp with time zone,
    CONSTRAINT wallet_keys_encrypted_private_key_check CHECK ((octet_length(encrypted_private_key) = 60)),
    CONSTRAINT wallet_keys_key_id_check CHECK ((key_id ~ '^[0-9a-f]{16}$'::text)),
    CONSTRAINT wallet_keys_scheme_check CHECK ((scheme = 'v1'::text)),
    CONSTRAINT wallet_keys_wrapped_data_key_check CHECK ((octet_length(wrapped_data_key) = 60))
);

--
-- Name: TABLE wallet_keys; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.wallet_keys IS 'Wallet private keys, only as ciphertext: each sealed with AES-256-GCM under a per-wallet data key (12-byte IV, 32-byte key, 16-byte tag), the data key sealed under the master key named by key_id; wallet id and address are the additional authenticated data of both. No API role can read it.';

--
-- Name: COLUMN wallet_keys.key_id; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.wallet_keys.key_id IS 'The master key that wraps this data key: the first 16 hex digits of its SHA-256, so the rotation command knows what still needs re-wrapping.';

--
-- Name: wallet_nonces; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.wallet_nonces (
    wallet_id uuid NOT NULL,
    next_nonce bigint DEFAULT 0 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT wallet_nonces_next_nonce_check CHECK ((next_nonce >= 0))
);

--
-- Name: TABLE wallet_nonces; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.wallet_nonces IS 'The next transaction nonce of each wallet. app_private.allocate_wallet_nonce takes it and moves it on in the confirming transaction: concurrent confirms of one wallet wait on this row, and a confirm that rolls back gives its nonce back, so nonces are distinct and gapless.';

--
-- Name: wallet_signed_transactions; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.wallet_signed_transactions (
    transaction_id uuid NOT NULL,
    raw text NOT NULL,
    broadcasts integer DEFAULT 0 NOT NULL,
    last_broadcast_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT wallet_signed_transactions_broadcasts_check CHECK ((broadcasts >= 0)),
    CONSTRAINT wallet_signed_transactions_raw_check CHECK ((raw ~ '^0x[0-9a-f]+$'::text))
);

--
-- Name: TABLE wallet_signed_transactions; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.wallet_signed_transactions IS 'The signed raw transaction of every submitted transfer, stored with its hash in the confirming transaction before anything is broadcast: a retry after an outage sends the same bytes, so a transfer can never go out twice.';

--
-- Name: access_logs access_logs_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.access_logs
    ADD CONSTRAINT access_logs_pkey PRIMARY KEY (id);

--
-- Name: attachments attachments_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_pkey PRIMARY KEY (id);

--
-- Name: attachments attachments_storage_key_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_storage_key_key UNIQUE (storage_key);

--
-- Name: chain_tokens chain_tokens_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.chain_tokens
    ADD CONSTRAINT chain_tokens_pkey PRIMARY KEY (chain_id, address);

--
-- Name: checkouts checkouts_buyer_idempotency_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.checkouts
    ADD CONSTRAINT checkouts_buyer_idempotency_key UNIQUE (buyer_id, idempotency_key);

--
-- Name: checkouts checkouts_payment_intent_id_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.checkouts
    ADD CONSTRAINT checkouts_payment_intent_id_key UNIQUE (payment_intent_id);

--
-- Name: checkouts checkouts_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.checkouts
    ADD CONSTRAINT checkouts_pkey PRIMARY KEY (id);

--
-- Name: config_versions config_versions_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.config_versions
    ADD CONSTRAINT config_versions_pkey PRIMARY KEY (version);

--
-- Name: conversation_participants conversation_participants_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversation_participants
    ADD CONSTRAINT conversation_participants_pkey PRIMARY KEY (conversation_id, user_id);

--
-- Name: conversations conversations_direct_key_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_direct_key_key UNIQUE (direct_key);

--
-- Name: conversations conversations_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_pkey PRIMARY KEY (id);

--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (id);

--
-- Name: identities identities_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.identities
    ADD CONSTRAINT identities_pkey PRIMARY KEY (id);

--
-- Name: identities identities_provider_provider_user_id_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.identities
    ADD CONSTRAINT identities_provider_provider_user_id_key UNIQUE (provider, provider_user_id);

--
-- Name: message_versions message_versions_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.message_versions
    ADD CONSTRAINT message_versions_pkey PRIMARY KEY (id);

--
-- Name: messages messages_conversation_id_seq_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_conversation_id_seq_key UNIQUE (conversation_id, seq);

--
-- Name: messages messages_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_pkey PRIMARY KEY (id);

--
-- Name: notification_batches notification_batches_idempotency_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_batches
    ADD CONSTRAINT notification_batches_idempotency_key UNIQUE (created_by, idempotency_key);

--
-- Name: notification_batches notification_batches_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_batches
    ADD CONSTRAINT notification_batches_pkey PRIMARY KEY (id);

--
-- Name: notification_counters notification_counters_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_counters
    ADD CONSTRAINT notification_counters_pkey PRIMARY KEY (user_id);

--
-- Name: notification_preferences notification_preferences_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_preferences
    ADD CONSTRAINT notification_preferences_pkey PRIMARY KEY (user_id);

--
-- Name: notifications notifications_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notifications
    ADD CONSTRAINT notifications_pkey PRIMARY KEY (id);

--
-- Name: order_history order_history_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.order_history
    ADD CONSTRAINT order_history_pkey PRIMARY KEY (id);

--
-- Name: order_items order_items_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.order_items
    ADD CONSTRAINT order_items_pkey PRIMARY KEY (order_id, product_id);

--
-- Name: order_transitions order_transitions_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.order_transitions
    ADD CONSTRAINT order_transitions_pkey PRIMARY KEY (from_status, to_status, actor);

--
-- Name: orders orders_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.orders
    ADD CONSTRAINT orders_pkey PRIMARY KEY (id);

--
-- Name: products products_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.products
    ADD CONSTRAINT products_pkey PRIMARY KEY (id);

--
-- Name: push_devices push_devices_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.push_devices
    ADD CONSTRAINT push_devices_pkey PRIMARY KEY (id);

--
-- Name: push_devices push_devices_token_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.push_devices
    ADD CONSTRAINT push_devices_token_key UNIQUE (token);

--
-- Name: refunds refunds_order_id_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.refunds
    ADD CONSTRAINT refunds_order_id_key UNIQUE (order_id);

--
-- Name: refunds refunds_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.refunds
    ADD CONSTRAINT refunds_pkey PRIMARY KEY (id);

--
-- Name: refunds refunds_provider_refund_id_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.refunds
    ADD CONSTRAINT refunds_provider_refund_id_key UNIQUE (provider_refund_id);

--
-- Name: role_changes role_changes_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.role_changes
    ADD CONSTRAINT role_changes_pkey PRIMARY KEY (id);

--
-- Name: security_events security_events_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.security_events
    ADD CONSTRAINT security_events_pkey PRIMARY KEY (id);

--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);

--
-- Name: settlement_lines settlement_lines_carry_once; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_carry_once UNIQUE (source_settlement_id);

--
-- Name: settlement_lines settlement_lines_order_once; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_order_once UNIQUE (order_id, kind);

--
-- Name: settlement_lines settlement_lines_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_pkey PRIMARY KEY (id);

--
-- Name: settlement_runs settlement_runs_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlement_runs
    ADD CONSTRAINT settlement_runs_pkey PRIMARY KEY (id);

--
-- Name: settlements settlements_one_per_run; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlements
    ADD CONSTRAINT settlements_one_per_run UNIQUE (run_id, vendor_id, currency);

--
-- Name: settlements settlements_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlements
    ADD CONSTRAINT settlements_pkey PRIMARY KEY (id);

--
-- Name: settlements settlements_transfer_id_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlements
    ADD CONSTRAINT settlements_transfer_id_key UNIQUE (transfer_id);

--
-- Name: status_changes status_changes_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.status_changes
    ADD CONSTRAINT status_changes_pkey PRIMARY KEY (id);

--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

--
-- Name: vendor_decisions vendor_decisions_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.vendor_decisions
    ADD CONSTRAINT vendor_decisions_pkey PRIMARY KEY (id);

--
-- Name: vendors vendors_payout_account_id_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.vendors
    ADD CONSTRAINT vendors_payout_account_id_key UNIQUE (payout_account_id);

--
-- Name: vendors vendors_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.vendors
    ADD CONSTRAINT vendors_pkey PRIMARY KEY (id);

--
-- Name: vendors vendors_slug_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.vendors
    ADD CONSTRAINT vendors_slug_key UNIQUE (slug);

--
-- Name: wallet_nfts wallet_nfts_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallet_nfts
    ADD CONSTRAINT wallet_nfts_pkey PRIMARY KEY (wallet_id, chain_id, contract, token_id);

--
-- Name: wallet_tokens wallet_tokens_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallet_tokens
    ADD CONSTRAINT wallet_tokens_pkey PRIMARY KEY (id);

--
-- Name: wallet_tokens wallet_tokens_user_id_chain_id_address_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallet_tokens
    ADD CONSTRAINT wallet_tokens_user_id_chain_id_address_key UNIQUE (user_id, chain_id, address);

--
-- Name: wallet_transactions wallet_transactions_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallet_transactions
    ADD CONSTRAINT wallet_transactions_pkey PRIMARY KEY (id);

--
-- Name: wallets wallets_address_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallets
    ADD CONSTRAINT wallets_address_key UNIQUE (address);

--
-- Name: wallets wallets_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallets
    ADD CONSTRAINT wallets_pkey PRIMARY KEY (id);

--
-- Name: wallets wallets_user_id_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallets
    ADD CONSTRAINT wallets_user_id_key UNIQUE (user_id);

--
-- Name: account_erasure_steps account_erasure_steps_function_name_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.account_erasure_steps
    ADD CONSTRAINT account_erasure_steps_function_name_key UNIQUE (function_name);

--
-- Name: account_erasure_steps account_erasure_steps_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.account_erasure_steps
    ADD CONSTRAINT account_erasure_steps_pkey PRIMARY KEY (domain);

--
-- Name: account_erasure_steps account_erasure_steps_position_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.account_erasure_steps
    ADD CONSTRAINT account_erasure_steps_position_key UNIQUE ("position");

--
-- Name: account_export_parts account_export_parts_function_name_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.account_export_parts
    ADD CONSTRAINT account_export_parts_function_name_key UNIQUE (function_name);

--
-- Name: account_export_parts account_export_parts_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.account_export_parts
    ADD CONSTRAINT account_export_parts_pkey PRIMARY KEY (part);

--
-- Name: catalog_counts catalog_counts_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.catalog_counts
    ADD CONSTRAINT catalog_counts_pkey PRIMARY KEY (vendor_id, category, in_stock);

--
-- Name: catalog_words catalog_words_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.catalog_words
    ADD CONSTRAINT catalog_words_pkey PRIMARY KEY (word);

--
-- Name: chain_blocks chain_blocks_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.chain_blocks
    ADD CONSTRAINT chain_blocks_pkey PRIMARY KEY (chain_id, number);

--
-- Name: chain_cursors chain_cursors_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.chain_cursors
    ADD CONSTRAINT chain_cursors_pkey PRIMARY KEY (chain_id);

--
-- Name: chain_heads chain_heads_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.chain_heads
    ADD CONSTRAINT chain_heads_pkey PRIMARY KEY (chain_id);

--
-- Name: checkout_secrets checkout_secrets_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.checkout_secrets
    ADD CONSTRAINT checkout_secrets_pkey PRIMARY KEY (checkout_id);

--
-- Name: dev_payment_objects dev_payment_objects_idempotency_key_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.dev_payment_objects
    ADD CONSTRAINT dev_payment_objects_idempotency_key_key UNIQUE (idempotency_key);

--
-- Name: dev_payment_objects dev_payment_objects_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.dev_payment_objects
    ADD CONSTRAINT dev_payment_objects_pkey PRIMARY KEY (id);

--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (user_id, key);

--
-- Name: jobs jobs_dedupe_key_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.jobs
    ADD CONSTRAINT jobs_dedupe_key_key UNIQUE (dedupe_key);

--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);

--
-- Name: magic_links magic_links_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.magic_links
    ADD CONSTRAINT magic_links_pkey PRIMARY KEY (id);

--
-- Name: magic_links magic_links_token_hash_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.magic_links
    ADD CONSTRAINT magic_links_token_hash_key UNIQUE (token_hash);

--
-- Name: message_digests_pending message_digests_pending_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.message_digests_pending
    ADD CONSTRAINT message_digests_pending_pkey PRIMARY KEY (conversation_id);

--
-- Name: message_digests message_digests_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.message_digests
    ADD CONSTRAINT message_digests_pkey PRIMARY KEY (conversation_id);

--
-- Name: nft_collections nft_collections_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.nft_collections
    ADD CONSTRAINT nft_collections_pkey PRIMARY KEY (chain_id, contract);

--
-- Name: nft_tokens nft_tokens_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.nft_tokens
    ADD CONSTRAINT nft_tokens_pkey PRIMARY KEY (chain_id, contract, token_id);

--
-- Name: nft_transfers nft_transfers_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.nft_transfers
    ADD CONSTRAINT nft_transfers_pkey PRIMARY KEY (chain_id, transaction_hash, log_index, batch_index);

--
-- Name: notification_batch_chunks notification_batch_chunks_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.notification_batch_chunks
    ADD CONSTRAINT notification_batch_chunks_pkey PRIMARY KEY (batch_id, chunk);

--
-- Name: notification_deliveries notification_deliveries_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.notification_deliveries
    ADD CONSTRAINT notification_deliveries_pkey PRIMARY KEY (id);

--
-- Name: oauth_flows oauth_flows_exchange_code_hash_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.oauth_flows
    ADD CONSTRAINT oauth_flows_exchange_code_hash_key UNIQUE (exchange_code_hash);

--
-- Name: oauth_flows oauth_flows_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.oauth_flows
    ADD CONSTRAINT oauth_flows_pkey PRIMARY KEY (id);

--
-- Name: oauth_flows oauth_flows_state_hash_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.oauth_flows
    ADD CONSTRAINT oauth_flows_state_hash_key UNIQUE (state_hash);

--
-- Name: rate_limits rate_limits_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.rate_limits
    ADD CONSTRAINT rate_limits_pkey PRIMARY KEY (bucket, window_start);

--
-- Name: refresh_tokens refresh_tokens_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_pkey PRIMARY KEY (id);

--
-- Name: refresh_tokens refresh_tokens_token_hash_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_token_hash_key UNIQUE (token_hash);

--
-- Name: siwe_nonces siwe_nonces_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.siwe_nonces
    ADD CONSTRAINT siwe_nonces_pkey PRIMARY KEY (nonce_hash);

--
-- Name: stripe_events stripe_events_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.stripe_events
    ADD CONSTRAINT stripe_events_pkey PRIMARY KEY (id);

--
-- Name: wallet_keys wallet_keys_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.wallet_keys
    ADD CONSTRAINT wallet_keys_pkey PRIMARY KEY (wallet_id);

--
-- Name: wallet_nonces wallet_nonces_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.wallet_nonces
    ADD CONSTRAINT wallet_nonces_pkey PRIMARY KEY (wallet_id);

--
-- Name: wallet_signed_transactions wallet_signed_transactions_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.wallet_signed_transactions
    ADD CONSTRAINT wallet_signed_transactions_pkey PRIMARY KEY (transaction_id);

--
-- Name: access_logs_created_at_brin; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX access_logs_created_at_brin ON app.access_logs USING brin (created_at);

--
-- Name: access_logs_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX access_logs_user_id_idx ON app.access_logs USING btree (user_id, id);

--
-- Name: attachments_conversation_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX attachments_conversation_id_idx ON app.attachments USING btree (conversation_id);

--
-- Name: attachments_message_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX attachments_message_id_idx ON app.attachments USING btree (message_id);

--
-- Name: attachments_uploader_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX attachments_uploader_id_idx ON app.attachments USING btree (uploader_id);

--
-- Name: checkouts_buyer_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX checkouts_buyer_idx ON app.checkouts USING btree (buyer_id, created_at DESC);

--
-- Name: checkouts_open_reserved_until_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX checkouts_open_reserved_until_idx ON app.checkouts USING btree (reserved_until) WHERE (closed_at IS NULL);

--
-- Name: config_versions_changed_by_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX config_versions_changed_by_idx ON app.config_versions USING btree (changed_by);

--
-- Name: conversation_participants_added_by_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX conversation_participants_added_by_idx ON app.conversation_participants USING btree (added_by);

--
-- Name: conversation_participants_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX conversation_participants_user_id_idx ON app.conversation_participants USING btree (user_id, conversation_id);

--
-- Name: conversations_created_by_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX conversations_created_by_idx ON app.conversations USING btree (created_by);

--
-- Name: events_created_at_brin; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_created_at_brin ON app.events USING brin (created_at);

--
-- Name: events_order_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_order_idx ON app.events USING btree (xid, id);

--
-- Name: events_topic_order_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_topic_order_idx ON app.events USING btree (topic, xid, id);

--
-- Name: identities_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX identities_user_id_idx ON app.identities USING btree (user_id);

--
-- Name: message_versions_message_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX message_versions_message_id_idx ON app.message_versions USING btree (message_id);

--
-- Name: messages_created_at_brin; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX messages_created_at_brin ON app.messages USING brin (created_at);

--
-- Name: messages_reply_to_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX messages_reply_to_id_idx ON app.messages USING btree (reply_to_id) WHERE (reply_to_id IS NOT NULL);

--
-- Name: messages_sender_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX messages_sender_id_idx ON app.messages USING btree (sender_id);

--
-- Name: notification_batches_created_at_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX notification_batches_created_at_idx ON app.notification_batches USING btree (created_at DESC, id DESC);

--
-- Name: notifications_batch_user_key; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX notifications_batch_user_key ON app.notifications USING btree (batch_id, user_id) WHERE (batch_id IS NOT NULL);

--
-- Name: notifications_collapse_key; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX notifications_collapse_key ON app.notifications USING btree (user_id, collapse_key) WHERE ((read_at IS NULL) AND (collapse_key IS NOT NULL));

--
-- Name: notifications_created_at_brin; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX notifications_created_at_brin ON app.notifications USING brin (created_at);

--
-- Name: notifications_inbox_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX notifications_inbox_idx ON app.notifications USING btree (user_id, created_at DESC, id DESC) WHERE inbox;

--
-- Name: notifications_unread_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX notifications_unread_idx ON app.notifications USING btree (user_id, created_at DESC, id DESC) WHERE (inbox AND (read_at IS NULL));

--
-- Name: order_history_actor_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX order_history_actor_idx ON app.order_history USING btree (actor_id);

--
-- Name: order_history_order_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX order_history_order_idx ON app.order_history USING btree (order_id, id);

--
-- Name: order_items_product_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX order_items_product_idx ON app.order_items USING btree (product_id);

--
-- Name: orders_buyer_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX orders_buyer_idx ON app.orders USING btree (buyer_id, created_at DESC, id DESC);

--
-- Name: orders_checkout_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX orders_checkout_idx ON app.orders USING btree (checkout_id, id);

--
-- Name: orders_created_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX orders_created_idx ON app.orders USING btree (created_at);

--
-- Name: orders_delivered_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX orders_delivered_idx ON app.orders USING btree (delivered_at) WHERE (status = 'delivered'::app.order_status);

--
-- Name: orders_refunded_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX orders_refunded_idx ON app.orders USING btree (refunded_at) WHERE (status = 'refunded'::app.order_status);

--
-- Name: orders_settleable_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX orders_settleable_idx ON app.orders USING btree (vendor_id, delivered_at) WHERE ((status = ANY (ARRAY['delivered'::app.order_status, 'completed'::app.order_status])) AND (payment_status = 'succeeded'::app.payment_status));

--
-- Name: orders_vendor_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX orders_vendor_idx ON app.orders USING btree (vendor_id, created_at DESC, id DESC);

--
-- Name: products_category_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX products_category_idx ON app.products USING btree (category, created_at DESC, id DESC) WHERE (status = 'active'::app.product_status);

--
-- Name: products_facets_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX products_facets_idx ON app.products USING btree (vendor_id, category, price_amount) WHERE (status = 'active'::app.product_status);

--
-- Name: products_newest_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX products_newest_idx ON app.products USING btree (created_at DESC, id DESC) WHERE (status = 'active'::app.product_status);

--
-- Name: products_price_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX products_price_idx ON app.products USING btree (price_amount, id) WHERE (status = 'active'::app.product_status);

--
-- Name: products_search_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX products_search_idx ON app.products USING gin (search) WHERE (status = 'active'::app.product_status);

--
-- Name: products_vendor_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX products_vendor_idx ON app.products USING btree (vendor_id, created_at DESC, id DESC);

--
-- Name: push_devices_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX push_devices_user_id_idx ON app.push_devices USING btree (user_id);

--
-- Name: refunds_requested_by_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX refunds_requested_by_idx ON app.refunds USING btree (requested_by);

--
-- Name: role_changes_changed_by_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX role_changes_changed_by_idx ON app.role_changes USING btree (changed_by);

--
-- Name: role_changes_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX role_changes_user_id_idx ON app.role_changes USING btree (user_id, changed_at DESC);

--
-- Name: security_events_created_at_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX security_events_created_at_idx ON app.security_events USING btree (created_at DESC, id DESC);

--
-- Name: security_events_type_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX security_events_type_idx ON app.security_events USING btree (type, created_at DESC);

--
-- Name: security_events_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX security_events_user_id_idx ON app.security_events USING btree (user_id);

--
-- Name: sessions_created_at_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX sessions_created_at_idx ON app.sessions USING btree (created_at);

--
-- Name: sessions_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX sessions_user_id_idx ON app.sessions USING btree (user_id);

--
-- Name: settlement_lines_settlement_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX settlement_lines_settlement_idx ON app.settlement_lines USING btree (settlement_id);

--
-- Name: settlement_lines_vendor_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX settlement_lines_vendor_idx ON app.settlement_lines USING btree (vendor_id);

--
-- Name: settlement_runs_started_by_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX settlement_runs_started_by_idx ON app.settlement_runs USING btree (started_by);

--
-- Name: settlements_carried_into_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX settlements_carried_into_idx ON app.settlements USING btree (carried_into);

--
-- Name: settlements_created_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX settlements_created_idx ON app.settlements USING btree (created_at DESC, id DESC);

--
-- Name: settlements_status_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX settlements_status_idx ON app.settlements USING btree (status, vendor_id);

--
-- Name: settlements_vendor_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX settlements_vendor_idx ON app.settlements USING btree (vendor_id, created_at DESC, id DESC);

--
-- Name: status_changes_changed_by_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX status_changes_changed_by_idx ON app.status_changes USING btree (changed_by);

--
-- Name: status_changes_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX status_changes_user_id_idx ON app.status_changes USING btree (user_id, changed_at DESC);

--
-- Name: users_created_at_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX users_created_at_id_idx ON app.users USING btree (created_at DESC, id DESC);

--
-- Name: users_directory_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX users_directory_idx ON app.users USING btree (lower(name), id) WHERE (status = 'active'::app.user_status);

--
-- Name: users_email_key; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX users_email_key ON app.users USING btree (lower(email));

--
-- Name: users_name_search_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX users_name_search_idx ON app.users USING gin (lower(name) extensions.gin_trgm_ops);

--
-- Name: users_role_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX users_role_idx ON app.users USING btree (role);

--
-- Name: users_search_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX users_search_idx ON app.users USING gin ((((COALESCE(lower(email), ''::text) || ' '::text) || lower(name))) extensions.gin_trgm_ops);

--
-- Name: vendor_decisions_decided_by_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX vendor_decisions_decided_by_idx ON app.vendor_decisions USING btree (decided_by);

--
-- Name: vendor_decisions_vendor_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX vendor_decisions_vendor_idx ON app.vendor_decisions USING btree (vendor_id, id);

--
-- Name: vendors_created_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX vendors_created_idx ON app.vendors USING btree (created_at DESC, id DESC);

--
-- Name: vendors_name_search_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX vendors_name_search_idx ON app.vendors USING gin (lower(name) extensions.gin_trgm_ops);

--
-- Name: vendors_one_live_per_owner; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX vendors_one_live_per_owner ON app.vendors USING btree (owner_id) WHERE (status = ANY (ARRAY['pending'::app.vendor_status, 'approved'::app.vendor_status, 'suspended'::app.vendor_status]));

--
-- Name: vendors_owner_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX vendors_owner_id_idx ON app.vendors USING btree (owner_id);

--
-- Name: vendors_status_created_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX vendors_status_created_idx ON app.vendors USING btree (status, created_at DESC, id DESC);

--
-- Name: wallet_nfts_user_order_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX wallet_nfts_user_order_idx ON app.wallet_nfts USING btree (user_id, created_at DESC, contract DESC, token_id DESC);

--
-- Name: wallet_tokens_chain_address_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX wallet_tokens_chain_address_idx ON app.wallet_tokens USING btree (chain_id, address);

--
-- Name: wallet_transactions_block_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX wallet_transactions_block_idx ON app.wallet_transactions USING btree (chain_id, block_number) WHERE (block_number IS NOT NULL);

--
-- Name: wallet_transactions_created_at_brin; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX wallet_transactions_created_at_brin ON app.wallet_transactions USING brin (created_at);

--
-- Name: wallet_transactions_in_flight_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX wallet_transactions_in_flight_idx ON app.wallet_transactions USING btree (wallet_id) WHERE (status = ANY (ARRAY['pending'::app.wallet_transaction_status, 'submitted'::app.wallet_transaction_status]));

--
-- Name: wallet_transactions_incoming_key; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX wallet_transactions_incoming_key ON app.wallet_transactions USING btree (wallet_id, hash, log_index) WHERE (direction = 'in'::app.wallet_transaction_direction);

--
-- Name: wallet_transactions_nonce_key; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX wallet_transactions_nonce_key ON app.wallet_transactions USING btree (wallet_id, nonce) WHERE (nonce IS NOT NULL);

--
-- Name: wallet_transactions_pending_expiry_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX wallet_transactions_pending_expiry_idx ON app.wallet_transactions USING btree (expires_at) WHERE (status = 'pending'::app.wallet_transaction_status);

--
-- Name: wallet_transactions_to_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX wallet_transactions_to_user_id_idx ON app.wallet_transactions USING btree (to_user_id) WHERE (to_user_id IS NOT NULL);

--
-- Name: wallet_transactions_user_order_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX wallet_transactions_user_order_idx ON app.wallet_transactions USING btree (user_id, created_at DESC, id DESC);

--
-- Name: wallet_transactions_wallet_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX wallet_transactions_wallet_id_idx ON app.wallet_transactions USING btree (wallet_id);

--
-- Name: wallets_created_at_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX wallets_created_at_idx ON app.wallets USING btree (created_at);

--
-- Name: catalog_words_length_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX catalog_words_length_idx ON app_private.catalog_words USING btree (char_length(word));

--
-- Name: dev_payment_objects_object_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX dev_payment_objects_object_idx ON app_private.dev_payment_objects USING btree (object, created_at);

--
-- Name: idempotency_keys_created_at_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX idempotency_keys_created_at_idx ON app_private.idempotency_keys USING btree (created_at);

--
-- Name: jobs_due_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX jobs_due_idx ON app_private.jobs USING btree (run_at, id) WHERE (state = ANY (ARRAY['queued'::app_private.job_state, 'running'::app_private.job_state]));

--
-- Name: jobs_finished_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX jobs_finished_idx ON app_private.jobs USING btree (state, finished_at) WHERE (state = ANY (ARRAY['done'::app_private.job_state, 'dead'::app_private.job_state]));

--
-- Name: jobs_lease_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX jobs_lease_idx ON app_private.jobs USING btree (locked_until) WHERE (state = 'running'::app_private.job_state);

--
-- Name: magic_links_expires_at_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX magic_links_expires_at_idx ON app_private.magic_links USING btree (expires_at);

--
-- Name: nft_transfers_block_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX nft_transfers_block_idx ON app_private.nft_transfers USING btree (chain_id, block_number);

--
-- Name: nft_transfers_from_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX nft_transfers_from_idx ON app_private.nft_transfers USING btree (chain_id, from_address, contract, token_id);

--
-- Name: nft_transfers_to_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX nft_transfers_to_idx ON app_private.nft_transfers USING btree (chain_id, to_address, contract, token_id);

--
-- Name: notification_deliveries_device_id_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX notification_deliveries_device_id_idx ON app_private.notification_deliveries USING btree (device_id) WHERE (device_id IS NOT NULL);

--
-- Name: notification_deliveries_email_key; Type: INDEX; Schema: app_private; Owner: -
--

CREATE UNIQUE INDEX notification_deliveries_email_key ON app_private.notification_deliveries USING btree (notification_id) WHERE (channel = 'email'::app_private.delivery_channel);

--
-- Name: notification_deliveries_finished_at_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX notification_deliveries_finished_at_idx ON app_private.notification_deliveries USING btree (finished_at) WHERE (finished_at IS NOT NULL);

--
-- Name: notification_deliveries_notification_id_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX notification_deliveries_notification_id_idx ON app_private.notification_deliveries USING btree (notification_id);

--
-- Name: notification_deliveries_push_key; Type: INDEX; Schema: app_private; Owner: -
--

CREATE UNIQUE INDEX notification_deliveries_push_key ON app_private.notification_deliveries USING btree (notification_id, device_id) WHERE (channel = 'push'::app_private.delivery_channel);

--
-- Name: oauth_flows_expires_at_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX oauth_flows_expires_at_idx ON app_private.oauth_flows USING btree (expires_at);

--
-- Name: oauth_flows_link_user_id_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX oauth_flows_link_user_id_idx ON app_private.oauth_flows USING btree (link_user_id);

--
-- Name: rate_limits_window_start_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX rate_limits_window_start_idx ON app_private.rate_limits USING btree (window_start);

--
-- Name: refresh_tokens_parent_id_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX refresh_tokens_parent_id_idx ON app_private.refresh_tokens USING btree (parent_id);

--
-- Name: refresh_tokens_session_id_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX refresh_tokens_session_id_idx ON app_private.refresh_tokens USING btree (session_id);

--
-- Name: siwe_nonces_expires_at_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX siwe_nonces_expires_at_idx ON app_private.siwe_nonces USING btree (expires_at);

--
-- Name: stripe_events_received_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX stripe_events_received_idx ON app_private.stripe_events USING btree (received_at);

--
-- Name: attachments attachments_guard_update; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER attachments_guard_update BEFORE UPDATE ON app.attachments FOR EACH ROW EXECUTE FUNCTION app_private.guard_attachment_update();

--
-- Name: attachments attachments_queue_storage_deletion; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER attachments_queue_storage_deletion AFTER DELETE ON app.attachments FOR EACH ROW EXECUTE FUNCTION app_private.queue_storage_deletion();

--
-- Name: checkouts checkouts_touch_updated_at; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER checkouts_touch_updated_at BEFORE UPDATE ON app.checkouts FOR EACH ROW EXECUTE FUNCTION app_private.touch_updated_at();

--
-- Name: messages messages_assign_seq; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER messages_assign_seq BEFORE INSERT ON app.messages FOR EACH ROW EXECUTE FUNCTION app_private.assign_message_seq();

--
-- Name: messages messages_events; Type: TRIGGER; Schema: app; Owner: -
--

CREATE CONSTRAINT TRIGGER messages_events AFTER INSERT OR UPDATE ON app.messages DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION app_private.message_events();

--
-- Name: messages messages_guard_update; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER messages_guard_update BEFORE UPDATE ON app.messages FOR EACH ROW EXECUTE FUNCTION app_private.guard_message_update();

--
-- Name: messages messages_mark_digest; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER messages_mark_digest AFTER INSERT ON app.messages FOR EACH ROW EXECUTE FUNCTION app_private.mark_message_digest();

--
-- Name: notification_preferences notification_preferences_validate; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER notification_preferences_validate BEFORE INSERT OR UPDATE ON app.notification_preferences FOR EACH ROW EXECUTE FUNCTION app_private.validate_notification_preferences();

--
-- Name: notifications notifications_count_new; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER notifications_count_new AFTER INSERT ON app.notifications REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_new_notifications();

--
-- Name: notifications notifications_deleted_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER notifications_deleted_event AFTER DELETE ON app.notifications FOR EACH ROW WHEN (old.inbox) EXECUTE FUNCTION app_private.notification_deleted_event();

--
-- Name: notifications notifications_guard_read; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER notifications_guard_read BEFORE UPDATE OF read_at ON app.notifications FOR EACH ROW EXECUTE FUNCTION app_private.guard_notification_read();

--
-- Name: notifications notifications_read_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER notifications_read_event AFTER UPDATE OF read_at ON app.notifications FOR EACH ROW WHEN (((old.read_at IS NULL) AND (new.read_at IS NOT NULL) AND new.inbox)) EXECUTE FUNCTION app_private.notification_read_event();

--
-- Name: orders orders_touch_updated_at; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER orders_touch_updated_at BEFORE UPDATE ON app.orders FOR EACH ROW EXECUTE FUNCTION app_private.touch_updated_at();

--
-- Name: conversation_participants participants_events; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER participants_events AFTER INSERT OR DELETE ON app.conversation_participants FOR EACH ROW EXECUTE FUNCTION app_private.participant_events();

--
-- Name: conversation_participants participants_guard_read_mark; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER participants_guard_read_mark BEFORE UPDATE ON app.conversation_participants FOR EACH ROW EXECUTE FUNCTION app_private.guard_read_mark();

--
-- Name: conversation_participants participants_notify; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER participants_notify AFTER INSERT ON app.conversation_participants REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION app_private.conversation_notifications();

--
-- Name: conversation_participants participants_read_mark_events; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER participants_read_mark_events AFTER UPDATE OF last_read_seq ON app.conversation_participants FOR EACH ROW EXECUTE FUNCTION app_private.read_mark_events();

--
-- Name: conversation_participants participants_read_notifications; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER participants_read_notifications AFTER UPDATE OF last_read_seq ON app.conversation_participants FOR EACH ROW WHEN ((new.last_read_seq > old.last_read_seq)) EXECUTE FUNCTION app_private.conversation_read_notifications();

--
-- Name: products products_count_delete; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER products_count_delete AFTER DELETE ON app.products REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_catalog();

--
-- Name: products products_count_insert; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER products_count_insert AFTER INSERT ON app.products REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_catalog();

--
-- Name: products products_count_update; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER products_count_update AFTER UPDATE ON app.products REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_catalog();

--
-- Name: products products_guard_write; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER products_guard_write BEFORE INSERT OR UPDATE ON app.products FOR EACH ROW EXECUTE FUNCTION app_private.guard_product_write();

--
-- Name: push_devices push_devices_touch; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER push_devices_touch BEFORE UPDATE ON app.push_devices FOR EACH ROW EXECUTE FUNCTION app_private.touch_push_device();

--
-- Name: refunds refunds_touch_updated_at; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER refunds_touch_updated_at BEFORE UPDATE ON app.refunds FOR EACH ROW EXECUTE FUNCTION app_private.touch_updated_at();

--
-- Name: role_changes role_changes_notify; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER role_changes_notify AFTER INSERT ON app.role_changes FOR EACH ROW EXECUTE FUNCTION app_private.role_change_notification();

--
-- Name: sessions sessions_guard_update; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER sessions_guard_update BEFORE UPDATE ON app.sessions FOR EACH ROW EXECUTE FUNCTION app_private.guard_session_update();

--
-- Name: settlement_lines settlement_lines_append_only; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER settlement_lines_append_only BEFORE DELETE OR UPDATE ON app.settlement_lines FOR EACH ROW EXECUTE FUNCTION app_private.refuse_ledger_change();

--
-- Name: settlements settlements_guard_update; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER settlements_guard_update BEFORE UPDATE ON app.settlements FOR EACH ROW EXECUTE FUNCTION app_private.guard_settlement_update();

--
-- Name: settlements settlements_no_delete; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER settlements_no_delete BEFORE DELETE ON app.settlements FOR EACH ROW EXECUTE FUNCTION app_private.refuse_ledger_change();

--
-- Name: users users_guard_delete; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER users_guard_delete BEFORE DELETE ON app.users FOR EACH ROW EXECUTE FUNCTION app_private.guard_user_delete();

--
-- Name: users users_guard_update; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER users_guard_update BEFORE UPDATE ON app.users FOR EACH ROW EXECUTE FUNCTION app_private.guard_user_update();

--
-- Name: users users_record_role_change; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER users_record_role_change AFTER UPDATE OF role ON app.users FOR EACH ROW WHEN ((old.role IS DISTINCT FROM new.role)) EXECUTE FUNCTION app_private.record_role_change();

--
-- Name: users users_touch_updated_at; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER users_touch_updated_at BEFORE UPDATE ON app.users FOR EACH ROW EXECUTE FUNCTION app_private.touch_updated_at();

--
-- Name: vendors vendors_touch_updated_at; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER vendors_touch_updated_at BEFORE UPDATE ON app.vendors FOR EACH ROW EXECUTE FUNCTION app_private.touch_updated_at();

--
-- Name: wallet_transactions wallet_transactions_events_delete; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER wallet_transactions_events_delete AFTER DELETE ON app.wallet_transactions FOR EACH ROW WHEN ((old.direction = 'in'::app.wallet_transaction_direction)) EXECUTE FUNCTION app_private.wallet_transaction_events();

--
-- Name: wallet_transactions wallet_transactions_events_insert; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER wallet_transactions_events_insert AFTER INSERT ON app.wallet_transactions FOR EACH ROW EXECUTE FUNCTION app_private.wallet_transaction_events();

--
-- Name: wallet_transactions wallet_transactions_events_update; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER wallet_transactions_events_update AFTER UPDATE OF status ON app.wallet_transactions FOR EACH ROW WHEN ((old.status IS DISTINCT FROM new.status)) EXECUTE FUNCTION app_private.wallet_transaction_events();

--
-- Name: wallet_transactions wallet_transactions_touch; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER wallet_transactions_touch BEFORE UPDATE ON app.wallet_transactions FOR EACH ROW EXECUTE FUNCTION app_private.touch_wallet_transaction();

--
-- Name: wallets wallets_announce; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER wallets_announce AFTER INSERT ON app.wallets FOR EACH ROW EXECUTE FUNCTION app_private.announce_wallet();

--
-- Name: dev_payment_objects dev_payment_objects_touch_updated_at; Type: TRIGGER; Schema: app_private; Owner: -
--

CREATE TRIGGER dev_payment_objects_touch_updated_at BEFORE UPDATE ON app_private.dev_payment_objects FOR EACH ROW EXECUTE FUNCTION app_private.touch_updated_at();

--
-- Name: attachments attachments_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

--
-- Name: attachments attachments_message_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_message_id_fkey FOREIGN KEY (message_id) REFERENCES app.messages(id) ON DELETE CASCADE;

--
-- Name: attachments attachments_uploader_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_uploader_id_fkey FOREIGN KEY (uploader_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: checkouts checkouts_buyer_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.checkouts
    ADD CONSTRAINT checkouts_buyer_id_fkey FOREIGN KEY (buyer_id) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: config_versions config_versions_changed_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.config_versions
    ADD CONSTRAINT config_versions_changed_by_fkey FOREIGN KEY (changed_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: conversation_participants conversation_participants_added_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversation_participants
    ADD CONSTRAINT conversation_participants_added_by_fkey FOREIGN KEY (added_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: conversation_participants conversation_participants_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversation_participants
    ADD CONSTRAINT conversation_participants_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

--
-- Name: conversation_participants conversation_participants_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversation_participants
    ADD CONSTRAINT conversation_participants_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: conversations conversations_created_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_created_by_fkey FOREIGN KEY (created_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: identities identities_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.identities
    ADD CONSTRAINT identities_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: message_versions message_versions_message_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.message_versions
    ADD CONSTRAINT message_versions_message_id_fkey FOREIGN KEY (message_id) REFERENCES app.messages(id) ON DELETE CASCADE;

--
-- Name: messages messages_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

--
-- Name: messages messages_reply_to_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_reply_to_id_fkey FOREIGN KEY (reply_to_id) REFERENCES app.messages(id) ON DELETE SET NULL;

--
-- Name: messages messages_sender_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_sender_id_fkey FOREIGN KEY (sender_id) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: notification_batches notification_batches_created_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_batches
    ADD CONSTRAINT notification_batches_created_by_fkey FOREIGN KEY (created_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: notification_counters notification_counters_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_counters
    ADD CONSTRAINT notification_counters_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: notification_preferences notification_preferences_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_preferences
    ADD CONSTRAINT notification_preferences_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: notifications notifications_batch_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notifications
    ADD CONSTRAINT notifications_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES app.notification_batches(id) ON DELETE SET NULL;

--
-- Name: notifications notifications_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notifications
    ADD CONSTRAINT notifications_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: order_history order_history_actor_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.order_history
    ADD CONSTRAINT order_history_actor_id_fkey FOREIGN KEY (actor_id) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: order_history order_history_order_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.order_history
    ADD CONSTRAINT order_history_order_id_fkey FOREIGN KEY (order_id) REFERENCES app.orders(id) ON DELETE CASCADE;

--
-- Name: order_items order_items_order_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.order_items
    ADD CONSTRAINT order_items_order_id_fkey FOREIGN KEY (order_id) REFERENCES app.orders(id) ON DELETE CASCADE;

--
-- Name: order_items order_items_product_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.order_items
    ADD CONSTRAINT order_items_product_id_fkey FOREIGN KEY (product_id) REFERENCES app.products(id) ON DELETE RESTRICT;

--
-- Name: orders orders_buyer_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.orders
    ADD CONSTRAINT orders_buyer_id_fkey FOREIGN KEY (buyer_id) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: orders orders_checkout_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.orders
    ADD CONSTRAINT orders_checkout_id_fkey FOREIGN KEY (checkout_id) REFERENCES app.checkouts(id) ON DELETE CASCADE;

--
-- Name: orders orders_vendor_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.orders
    ADD CONSTRAINT orders_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE RESTRICT;

--
-- Name: products products_vendor_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.products
    ADD CONSTRAINT products_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE CASCADE;

--
-- Name: push_devices push_devices_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.push_devices
    ADD CONSTRAINT push_devices_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: refunds refunds_order_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.refunds
    ADD CONSTRAINT refunds_order_id_fkey FOREIGN KEY (order_id) REFERENCES app.orders(id) ON DELETE CASCADE;

--
-- Name: refunds refunds_requested_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.refunds
    ADD CONSTRAINT refunds_requested_by_fkey FOREIGN KEY (requested_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: role_changes role_changes_changed_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.role_changes
    ADD CONSTRAINT role_changes_changed_by_fkey FOREIGN KEY (changed_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: role_changes role_changes_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.role_changes
    ADD CONSTRAINT role_changes_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: security_events security_events_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.security_events
    ADD CONSTRAINT security_events_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: sessions sessions_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.sessions
    ADD CONSTRAINT sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: settlement_lines settlement_lines_order_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_order_id_fkey FOREIGN KEY (order_id) REFERENCES app.orders(id) ON DELETE RESTRICT;

--
-- Name: settlement_lines settlement_lines_settlement_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_settlement_id_fkey FOREIGN KEY (settlement_id) REFERENCES app.settlements(id) ON DELETE RESTRICT;

--
-- Name: settlement_lines settlement_lines_source_settlement_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_source_settlement_id_fkey FOREIGN KEY (source_settlement_id) REFERENCES app.settlements(id) ON DELETE RESTRICT;

--
-- Name: settlement_lines settlement_lines_vendor_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE RESTRICT;

--
-- Name: settlement_runs settlement_runs_started_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlement_runs
    ADD CONSTRAINT settlement_runs_started_by_fkey FOREIGN KEY (started_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: settlements settlements_carried_into_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlements
    ADD CONSTRAINT settlements_carried_into_fkey FOREIGN KEY (carried_into) REFERENCES app.settlements(id) ON DELETE RESTRICT;

--
-- Name: settlements settlements_run_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlements
    ADD CONSTRAINT settlements_run_id_fkey FOREIGN KEY (run_id) REFERENCES app.settlement_runs(id) ON DELETE RESTRICT;

--
-- Name: settlements settlements_vendor_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.settlements
    ADD CONSTRAINT settlements_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE RESTRICT;

--
-- Name: status_changes status_changes_changed_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.status_changes
    ADD CONSTRAINT status_changes_changed_by_fkey FOREIGN KEY (changed_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: status_changes status_changes_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.status_changes
    ADD CONSTRAINT status_changes_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: vendor_decisions vendor_decisions_decided_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.vendor_decisions
    ADD CONSTRAINT vendor_decisions_decided_by_fkey FOREIGN KEY (decided_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: vendor_decisions vendor_decisions_vendor_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.vendor_decisions
    ADD CONSTRAINT vendor_decisions_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE CASCADE;

--
-- Name: vendors vendors_owner_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.vendors
    ADD CONSTRAINT vendors_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: wallet_nfts wallet_nfts_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallet_nfts
    ADD CONSTRAINT wallet_nfts_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: wallet_nfts wallet_nfts_wallet_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallet_nfts
    ADD CONSTRAINT wallet_nfts_wallet_id_fkey FOREIGN KEY (wallet_id) REFERENCES app.wallets(id) ON DELETE CASCADE;

--
-- Name: wallet_tokens wallet_tokens_chain_id_address_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallet_tokens
    ADD CONSTRAINT wallet_tokens_chain_id_address_fkey FOREIGN KEY (chain_id, address) REFERENCES app.chain_tokens(chain_id, address) ON DELETE CASCADE;

--
-- Name: wallet_tokens wallet_tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallet_tokens
    ADD CONSTRAINT wallet_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: wallet_transactions wallet_transactions_to_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallet_transactions
    ADD CONSTRAINT wallet_transactions_to_user_id_fkey FOREIGN KEY (to_user_id) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: wallet_transactions wallet_transactions_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallet_transactions
    ADD CONSTRAINT wallet_transactions_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: wallet_transactions wallet_transactions_wallet_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallet_transactions
    ADD CONSTRAINT wallet_transactions_wallet_id_fkey FOREIGN KEY (wallet_id) REFERENCES app.wallets(id) ON DELETE CASCADE;

--
-- Name: wallets wallets_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.wallets
    ADD CONSTRAINT wallets_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: catalog_counts catalog_counts_vendor_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.catalog_counts
    ADD CONSTRAINT catalog_counts_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE CASCADE;

--
-- Name: checkout_secrets checkout_secrets_checkout_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.checkout_secrets
    ADD CONSTRAINT checkout_secrets_checkout_id_fkey FOREIGN KEY (checkout_id) REFERENCES app.checkouts(id) ON DELETE CASCADE;

--
-- Name: idempotency_keys idempotency_keys_user_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.idempotency_keys
    ADD CONSTRAINT idempotency_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: message_digests message_digests_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.message_digests
    ADD CONSTRAINT message_digests_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

--
-- Name: message_digests_pending message_digests_pending_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.message_digests_pending
    ADD CONSTRAINT message_digests_pending_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

--
-- Name: notification_batch_chunks notification_batch_chunks_batch_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.notification_batch_chunks
    ADD CONSTRAINT notification_batch_chunks_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES app.notification_batches(id) ON DELETE CASCADE;

--
-- Name: notification_deliveries notification_deliveries_device_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.notification_deliveries
    ADD CONSTRAINT notification_deliveries_device_id_fkey FOREIGN KEY (device_id) REFERENCES app.push_devices(id) ON DELETE SET NULL;

--
-- Name: notification_deliveries notification_deliveries_notification_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.notification_deliveries
    ADD CONSTRAINT notification_deliveries_notification_id_fkey FOREIGN KEY (notification_id) REFERENCES app.notifications(id) ON DELETE CASCADE;

--
-- Name: oauth_flows oauth_flows_link_user_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.oauth_flows
    ADD CONSTRAINT oauth_flows_link_user_id_fkey FOREIGN KEY (link_user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: refresh_tokens refresh_tokens_parent_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_parent_id_fkey FOREIGN KEY (parent_id) REFERENCES app_private.refresh_tokens(id) ON DELETE CASCADE;

--
-- Name: refresh_tokens refresh_tokens_session_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_session_id_fkey FOREIGN KEY (session_id) REFERENCES app.sessions(id) ON DELETE CASCADE;

--
-- Name: wallet_keys wallet_keys_wallet_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.wallet_keys
    ADD CONSTRAINT wallet_keys_wallet_id_fkey FOREIGN KEY (wallet_id) REFERENCES app.wallets(id) ON DELETE CASCADE;

--
-- Name: wallet_nonces wallet_nonces_wallet_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.wallet_nonces
    ADD CONSTRAINT wallet_nonces_wallet_id_fkey FOREIGN KEY (wallet_id) REFERENCES app.wallets(id) ON DELETE CASCADE;

--
-- Name: wallet_signed_transactions wallet_signed_transactions_transaction_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.wallet_signed_transactions
    ADD CONSTRAINT wallet_signed_transactions_transaction_id_fkey FOREIGN KEY (transaction_id) REFERENCES app.wallet_transactions(id) ON DELETE CASCADE;

--
-- Name: access_logs; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.access_logs ENABLE ROW LEVEL SECURITY;

--
-- Name: access_logs access_logs_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY access_logs_select_admin ON app.access_logs FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: attachments; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.attachments ENABLE ROW LEVEL SECURITY;

--
-- Name: attachments attachments_insert_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY attachments_insert_self ON app.attachments FOR INSERT TO authenticated WITH CHECK (((uploader_id = ( SELECT auth.uid() AS uid)) AND (message_id IS NULL) AND (conversation_id IS NULL)));

--
-- Name: attachments attachments_select_visible; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY attachments_select_visible ON app.attachments FOR SELECT TO authenticated USING (((uploader_id = ( SELECT auth.uid() AS uid)) OR (conversation_id IN ( SELECT app.my_conversation_ids() AS my_conversation_ids))));

--
-- Name: attachments attachments_update_attach; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY attachments_update_attach ON app.attachments FOR UPDATE TO authenticated USING (((uploader_id = ( SELECT auth.uid() AS uid)) AND (message_id IS NULL))) WITH CHECK (((uploader_id = ( SELECT auth.uid() AS uid)) AND (message_id IS NOT NULL)));

--
-- Name: chain_tokens; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.chain_tokens ENABLE ROW LEVEL SECURITY;

--
-- Name: chain_tokens chain_tokens_select_subscriber; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY chain_tokens_select_subscriber ON app.chain_tokens FOR SELECT TO authenticated USING (( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role));

--
-- Name: checkouts; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.checkouts ENABLE ROW LEVEL SECURITY;

--
-- Name: checkouts checkouts_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY checkouts_select_admin ON app.checkouts FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: checkouts checkouts_select_buyer; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY checkouts_select_buyer ON app.checkouts FOR SELECT TO authenticated USING (((buyer_id = ( SELECT auth.uid() AS uid)) AND ( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role)));

--
-- Name: config_versions; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.config_versions ENABLE ROW LEVEL SECURITY;

--
-- Name: config_versions config_versions_insert_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY config_versions_insert_admin ON app.config_versions FOR INSERT TO authenticated WITH CHECK ((( SELECT app.is_admin() AS is_admin) AND (changed_by = ( SELECT auth.uid() AS uid))));

--
-- Name: config_versions config_versions_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY config_versions_select_admin ON app.config_versions FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: conversation_participants; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.conversation_participants ENABLE ROW LEVEL SECURITY;

--
-- Name: conversations; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.conversations ENABLE ROW LEVEL SECURITY;

--
-- Name: conversations conversations_select_participant; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY conversations_select_participant ON app.conversations FOR SELECT TO authenticated USING ((id IN ( SELECT app.my_conversation_ids() AS my_conversation_ids)));

--
-- Name: events; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.events ENABLE ROW LEVEL SECURITY;

--
-- Name: events events_select_readable; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY events_select_readable ON app.events FOR SELECT TO authenticated USING ((topic IN ( SELECT app.readable_topics() AS readable_topics)));

--
-- Name: identities; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.identities ENABLE ROW LEVEL SECURITY;

--
-- Name: identities identities_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY identities_select_admin ON app.identities FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: identities identities_select_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY identities_select_self ON app.identities FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: message_versions; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.message_versions ENABLE ROW LEVEL SECURITY;

--
-- Name: message_versions message_versions_select_participant; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY message_versions_select_participant ON app.message_versions FOR SELECT TO authenticated USING ((message_id IN ( SELECT m.id
   FROM app.messages m
  WHERE (m.conversation_id IN ( SELECT app.my_conversation_ids() AS my_conversation_ids)))));

--
-- Name: messages; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.messages ENABLE ROW LEVEL SECURITY;

--
-- Name: messages messages_insert_participant; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY messages_insert_participant ON app.messages FOR INSERT TO authenticated WITH CHECK (((sender_id = ( SELECT auth.uid() AS uid)) AND app.is_participant(conversation_id)));

--
-- Name: messages messages_select_participant; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY messages_select_participant ON app.messages FOR SELECT TO authenticated USING ((conversation_id IN ( SELECT app.my_conversation_ids() AS my_conversation_ids)));

--
-- Name: messages messages_update_author; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY messages_update_author ON app.messages FOR UPDATE TO authenticated USING (((sender_id = ( SELECT auth.uid() AS uid)) AND (deleted_at IS NULL) AND ( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role))) WITH CHECK ((sender_id = ( SELECT auth.uid() AS uid)));

--
-- Name: notification_batches; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.notification_batches ENABLE ROW LEVEL SECURITY;

--
-- Name: notification_batches notification_batches_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notification_batches_select_admin ON app.notification_batches FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: notification_counters; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.notification_counters ENABLE ROW LEVEL SECURITY;

--
-- Name: notification_counters notification_counters_select_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notification_counters_select_own ON app.notification_counters FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: notification_preferences; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.notification_preferences ENABLE ROW LEVEL SECURITY;

--
-- Name: notification_preferences notification_preferences_insert_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notification_preferences_insert_own ON app.notification_preferences FOR INSERT TO authenticated WITH CHECK ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: notification_preferences notification_preferences_select_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notification_preferences_select_own ON app.notification_preferences FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: notification_preferences notification_preferences_update_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notification_preferences_update_own ON app.notification_preferences FOR UPDATE TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid))) WITH CHECK ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: notifications; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.notifications ENABLE ROW LEVEL SECURITY;

--
-- Name: notifications notifications_select_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notifications_select_own ON app.notifications FOR SELECT TO authenticated USING (((user_id = ( SELECT auth.uid() AS uid)) AND inbox));

--
-- Name: notifications notifications_update_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notifications_update_own ON app.notifications FOR UPDATE TO authenticated USING (((user_id = ( SELECT auth.uid() AS uid)) AND inbox)) WITH CHECK (((user_id = ( SELECT auth.uid() AS uid)) AND inbox));

--
-- Name: order_history; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.order_history ENABLE ROW LEVEL SECURITY;

--
-- Name: order_history order_history_select_visible; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY order_history_select_visible ON app.order_history FOR SELECT TO authenticated USING ((EXISTS ( SELECT 1
   FROM app.orders o
  WHERE (o.id = order_history.order_id))));

--
-- Name: order_items; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.order_items ENABLE ROW LEVEL SECURITY;

--
-- Name: order_items order_items_select_visible; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY order_items_select_visible ON app.order_items FOR SELECT TO authenticated USING ((EXISTS ( SELECT 1
   FROM app.orders o
  WHERE (o.id = order_items.order_id))));

--
-- Name: order_transitions; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.order_transitions ENABLE ROW LEVEL SECURITY;

--
-- Name: order_transitions order_transitions_select_all; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY order_transitions_select_all ON app.order_transitions FOR SELECT TO authenticated USING (true);

--
-- Name: orders; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.orders ENABLE ROW LEVEL SECURITY;

--
-- Name: orders orders_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY orders_select_admin ON app.orders FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: orders orders_select_buyer; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY orders_select_buyer ON app.orders FOR SELECT TO authenticated USING (((buyer_id = ( SELECT auth.uid() AS uid)) AND ( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role)));

--
-- Name: orders orders_select_vendor; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY orders_select_vendor ON app.orders FOR SELECT TO authenticated USING ((vendor_id IN ( SELECT app.my_vendor_ids() AS my_vendor_ids)));

--
-- Name: conversation_participants participants_select_participant; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY participants_select_participant ON app.conversation_participants FOR SELECT TO authenticated USING ((conversation_id IN ( SELECT app.my_conversation_ids() AS my_conversation_ids)));

--
-- Name: conversation_participants participants_update_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY participants_update_self ON app.conversation_participants FOR UPDATE TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid))) WITH CHECK ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: products; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.products ENABLE ROW LEVEL SECURITY;

--
-- Name: products products_insert_vendor; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY products_insert_vendor ON app.products FOR INSERT TO authenticated WITH CHECK ((vendor_id IN ( SELECT app.my_selling_vendor_ids() AS my_selling_vendor_ids)));

--
-- Name: products products_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY products_select_admin ON app.products FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: products products_select_owner; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY products_select_owner ON app.products FOR SELECT TO authenticated USING ((vendor_id IN ( SELECT app.my_vendor_ids() AS my_vendor_ids)));

--
-- Name: products products_update_vendor; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY products_update_vendor ON app.products FOR UPDATE TO authenticated USING ((vendor_id IN ( SELECT app.my_selling_vendor_ids() AS my_selling_vendor_ids))) WITH CHECK ((vendor_id IN ( SELECT app.my_selling_vendor_ids() AS my_selling_vendor_ids)));

--
-- Name: push_devices; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.push_devices ENABLE ROW LEVEL SECURITY;

--
-- Name: push_devices push_devices_select_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY push_devices_select_own ON app.push_devices FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: refunds; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.refunds ENABLE ROW LEVEL SECURITY;

--
-- Name: refunds refunds_select_visible; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY refunds_select_visible ON app.refunds FOR SELECT TO authenticated USING ((EXISTS ( SELECT 1
   FROM app.orders o
  WHERE (o.id = refunds.order_id))));

--
-- Name: role_changes; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.role_changes ENABLE ROW LEVEL SECURITY;

--
-- Name: role_changes role_changes_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY role_changes_select_admin ON app.role_changes FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: role_changes role_changes_select_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY role_changes_select_self ON app.role_changes FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: security_events; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.security_events ENABLE ROW LEVEL SECURITY;

--
-- Name: security_events security_events_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY security_events_select_admin ON app.security_events FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: sessions; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.sessions ENABLE ROW LEVEL SECURITY;

--
-- Name: sessions sessions_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY sessions_select_admin ON app.sessions FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: sessions sessions_select_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY sessions_select_self ON app.sessions FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: sessions sessions_update_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY sessions_update_self ON app.sessions FOR UPDATE TO authenticated USING (((user_id = ( SELECT auth.uid() AS uid)) AND (revoked_at IS NULL))) WITH CHECK (((user_id = ( SELECT auth.uid() AS uid)) AND (revoked_at IS NOT NULL)));

--
-- Name: settlement_lines; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.settlement_lines ENABLE ROW LEVEL SECURITY;

--
-- Name: settlement_lines settlement_lines_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY settlement_lines_select_admin ON app.settlement_lines FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: settlement_lines settlement_lines_select_vendor; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY settlement_lines_select_vendor ON app.settlement_lines FOR SELECT TO authenticated USING ((vendor_id IN ( SELECT app.my_vendor_ids() AS my_vendor_ids)));

--
-- Name: settlement_runs; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.settlement_runs ENABLE ROW LEVEL SECURITY;

--
-- Name: settlement_runs settlement_runs_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY settlement_runs_select_admin ON app.settlement_runs FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: settlements; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.settlements ENABLE ROW LEVEL SECURITY;

--
-- Name: settlements settlements_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY settlements_select_admin ON app.settlements FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: settlements settlements_select_vendor; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY settlements_select_vendor ON app.settlements FOR SELECT TO authenticated USING ((vendor_id IN ( SELECT app.my_vendor_ids() AS my_vendor_ids)));

--
-- Name: status_changes; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.status_changes ENABLE ROW LEVEL SECURITY;

--
-- Name: status_changes status_changes_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY status_changes_select_admin ON app.status_changes FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: status_changes status_changes_select_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY status_changes_select_self ON app.status_changes FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: users; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.users ENABLE ROW LEVEL SECURITY;

--
-- Name: users users_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY users_select_admin ON app.users FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: users users_select_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY users_select_self ON app.users FOR SELECT TO authenticated USING ((id = ( SELECT auth.uid() AS uid)));

--
-- Name: users users_update_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY users_update_admin ON app.users FOR UPDATE TO authenticated USING (( SELECT app.is_admin() AS is_admin)) WITH CHECK (( SELECT app.is_admin() AS is_admin));

--
-- Name: users users_update_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY users_update_self ON app.users FOR UPDATE TO authenticated USING ((id = ( SELECT auth.uid() AS uid))) WITH CHECK ((id = ( SELECT auth.uid() AS uid)));

--
-- Name: vendor_decisions; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.vendor_decisions ENABLE ROW LEVEL SECURITY;

--
-- Name: vendor_decisions vendor_decisions_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY vendor_decisions_select_admin ON app.vendor_decisions FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: vendor_decisions vendor_decisions_select_owner; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY vendor_decisions_select_owner ON app.vendor_decisions FOR SELECT TO authenticated USING ((vendor_id IN ( SELECT app.my_vendor_ids() AS my_vendor_ids)));

--
-- Name: vendors; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.vendors ENABLE ROW LEVEL SECURITY;

--
-- Name: vendors vendors_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY vendors_select_admin ON app.vendors FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: vendors vendors_select_owner; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY vendors_select_owner ON app.vendors FOR SELECT TO authenticated USING (((owner_id = ( SELECT auth.uid() AS uid)) AND ( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role)));

--
-- Name: wallet_nfts; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.wallet_nfts ENABLE ROW LEVEL SECURITY;

--
-- Name: wallet_nfts wallet_nfts_select_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY wallet_nfts_select_own ON app.wallet_nfts FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: wallet_tokens; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.wallet_tokens ENABLE ROW LEVEL SECURITY;

--
-- Name: wallet_tokens wallet_tokens_select_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY wallet_tokens_select_own ON app.wallet_tokens FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: wallet_transactions; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.wallet_transactions ENABLE ROW LEVEL SECURITY;

--
-- Name: wallet_transactions wallet_transactions_select_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY wallet_transactions_select_own ON app.wallet_transactions FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: wallets; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.wallets ENABLE ROW LEVEL SECURITY;

--
-- Name: wallets wallets_select_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY wallets_select_own ON app.wallets FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: account_erasure_steps; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.account_erasure_steps ENABLE ROW LEVEL SECURITY;

--
-- Name: account_export_parts; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.account_export_parts ENABLE ROW LEVEL SECURITY;

--
-- Name: catalog_counts; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.catalog_counts ENABLE ROW LEVEL SECURITY;

--
-- Name: catalog_words; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.catalog_words ENABLE ROW LEVEL SECURITY;

--
-- Name: chain_blocks; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.chain_blocks ENABLE ROW LEVEL SECURITY;

--
-- Name: chain_cursors; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.chain_cursors ENABLE ROW LEVEL SECURITY;

--
-- Name: chain_heads; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.chain_heads ENABLE ROW LEVEL SECURITY;

--
-- Name: checkout_secrets; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.checkout_secrets ENABLE ROW LEVEL SECURITY;

--
-- Name: dev_payment_objects; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.dev_payment_objects ENABLE ROW LEVEL SECURITY;

--
-- Name: idempotency_keys; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.idempotency_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: jobs; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.jobs ENABLE ROW LEVEL SECURITY;

--
-- Name: magic_links; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.magic_links ENABLE ROW LEVEL SECURITY;

--
-- Name: message_digests; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.message_digests ENABLE ROW LEVEL SECURITY;

--
-- Name: message_digests_pending; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.message_digests_pending ENABLE ROW LEVEL SECURITY;

--
-- Name: nft_collections; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.nft_collections ENABLE ROW LEVEL SECURITY;

--
-- Name: nft_tokens; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.nft_tokens ENABLE ROW LEVEL SECURITY;

--
-- Name: nft_transfers; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.nft_transfers ENABLE ROW LEVEL SECURITY;

--
-- Name: notification_batch_chunks; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.notification_batch_chunks ENABLE ROW LEVEL SECURITY;

--
-- Name: notification_deliveries; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.notification_deliveries ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_flows; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.oauth_flows ENABLE ROW LEVEL SECURITY;

--
-- Name: rate_limits; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.rate_limits ENABLE ROW LEVEL SECURITY;

--
-- Name: refresh_tokens; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.refresh_tokens ENABLE ROW LEVEL SECURITY;

--
-- Name: siwe_nonces; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.siwe_nonces ENABLE ROW LEVEL SECURITY;

--
-- Name: stripe_events; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.stripe_events ENABLE ROW LEVEL SECURITY;

--
-- Name: wallet_keys; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.wallet_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: wallet_nonces; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.wallet_nonces ENABLE ROW LEVEL SECURITY;

--
-- Name: wallet_signed_transactions; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.wallet_signed_transactions ENABLE ROW LEVEL SECURITY;

--
-- Name: SCHEMA app; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA app TO anon;
GRANT USAGE ON SCHEMA app TO authenticated;
GRANT USAGE ON SCHEMA app TO service_role;

--
-- Name: TYPE conversation_type; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.conversation_type TO authenticated;

--
-- Name: TYPE nft_standard; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.nft_standard TO authenticated;

--
-- Name: TYPE notification_batch_status; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.notification_batch_status TO authenticated;

--
-- Name: TYPE notification_priority; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.notification_priority TO authenticated;

--
-- Name: TYPE notification_type; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.notification_type TO authenticated;

--
-- Name: TYPE order_actor; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.order_actor TO authenticated;

--
-- Name: TYPE order_status; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.order_status TO authenticated;

--
-- Name: TYPE payment_status; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.payment_status TO authenticated;

--
-- Name: TYPE payouts_status; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.payouts_status TO authenticated;

--
-- Name: TYPE product_status; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.product_status TO authenticated;

--
-- Name: TYPE push_platform; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.push_platform TO authenticated;

--
-- Name: TYPE refund_status; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.refund_status TO authenticated;

--
-- Name: TYPE security_severity; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.security_severity TO anon;
GRANT ALL ON TYPE app.security_severity TO authenticated;

--
-- Name: TYPE settlement_status; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.settlement_status TO authenticated;

--
-- Name: TYPE user_role; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.user_role TO anon;
GRANT ALL ON TYPE app.user_role TO authenticated;

--
-- Name: TYPE user_status; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.user_status TO anon;
GRANT ALL ON TYPE app.user_status TO authenticated;

--
-- Name: TYPE vendor_status; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.vendor_status TO authenticated;

--
-- Name: TYPE wallet_token_kind; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.wallet_token_kind TO authenticated;

--
-- Name: TYPE wallet_transaction_direction; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.wallet_transaction_direction TO authenticated;

--
-- Name: TYPE wallet_transaction_status; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.wallet_transaction_status TO authenticated;

--
-- Name: FUNCTION abandon_checkout(target_checkout_id uuid, idempotency_key text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.abandon_checkout(target_checkout_id uuid, idempotency_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.abandon_checkout(target_checkout_id uuid, idempotency_key text) TO authenticated;

--
-- Name: FUNCTION add_participants(target_conversation_id uuid, user_ids uuid[]); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.add_participants(target_conversation_id uuid, user_ids uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app.add_participants(target_conversation_id uuid, user_ids uuid[]) TO authenticated;

--
-- Name: FUNCTION admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app.admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) TO authenticated;

--
-- Name: FUNCTION admin_wallet_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.admin_wallet_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app.admin_wallet_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) TO authenticated;

--
-- Name: FUNCTION apply_for_vendor(vendor_name text, vendor_description text, vendor_contact_email text, vendor_country text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.apply_for_vendor(vendor_name text, vendor_description text, vendor_contact_email text, vendor_country text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.apply_for_vendor(vendor_name text, vendor_description text, vendor_contact_email text, vendor_country text) TO authenticated;

--
-- Name: FUNCTION attach_payment_intent(target_checkout_id uuid, intent_id text, intent_client_secret text, idempotency_key text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.attach_payment_intent(target_checkout_id uuid, intent_id text, intent_client_secret text, idempotency_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.attach_payment_intent(target_checkout_id uuid, intent_id text, intent_client_secret text, idempotency_key text) TO authenticated;

--
-- Name: TABLE attachments; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.uploader_id; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(uploader_id) ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.conversation_id; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(conversation_id) ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.message_id; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(message_id) ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.name; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(name) ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.content_type; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(content_type) ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.size; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(size) ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.storage_key; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(storage_key) ON TABLE app.attachments TO authenticated;

--
-- Name: FUNCTION attachment_json(a app.attachments); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.attachment_json(a app.attachments) FROM PUBLIC;
GRANT ALL ON FUNCTION app.attachment_json(a app.attachments) TO authenticated;

--
-- Name: FUNCTION can_read_topic(topic text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.can_read_topic(topic text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.can_read_topic(topic text) TO authenticated;

--
-- Name: FUNCTION can_write_topic(topic text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.can_write_topic(topic text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.can_write_topic(topic text) TO authenticated;

--
-- Name: FUNCTION change_order_status(target_order_id uuid, to_status app.order_status, move_reason text, tracking text, ship_carrier text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.change_order_status(target_order_id uuid, to_status app.order_status, move_reason text, tracking text, ship_carrier text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.change_order_status(target_order_id uuid, to_status app.order_status, move_reason text, tracking text, ship_carrier text) TO authenticated;

--
-- Name: TABLE role_changes; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.role_changes TO authenticated;

--
-- Name: FUNCTION change_user_role(target_user_id uuid, new_role app.user_role, change_reason text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text) TO authenticated;

--
-- Name: TABLE status_changes; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.status_changes TO authenticated;

--
-- Name: FUNCTION change_user_status(target_user_id uuid, new_status app.user_status, change_reason text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.change_user_status(target_user_id uuid, new_status app.user_status, change_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.change_user_status(target_user_id uuid, new_status app.user_status, change_reason text) TO authenticated;

--
-- Name: FUNCTION claim_idempotency_key(idempotency_key text, key_scope text, body_hash text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text) TO authenticated;

--
-- Name: FUNCTION config_int(section text, key text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.config_int(section text, key text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.config_int(section text, key text) TO authenticated;

--
-- Name: FUNCTION conversation_profiles(conversation_ids uuid[]); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.conversation_profiles(conversation_ids uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app.conversation_profiles(conversation_ids uuid[]) TO authenticated;

--
-- Name: FUNCTION create_checkout(requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.create_checkout(requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.create_checkout(requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) TO authenticated;

--
-- Name: FUNCTION create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text) TO authenticated;

--
-- Name: FUNCTION create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority) FROM PUBLIC;
GRANT ALL ON FUNCTION app.create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority) TO authenticated;

--
-- Name: FUNCTION create_notification_batch(audience jsonb, notification jsonb, channels text[], idempotency_key text, request_hash text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.create_notification_batch(audience jsonb, notification jsonb, channels text[], idempotency_key text, request_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.create_notification_batch(audience jsonb, notification jsonb, channels text[], idempotency_key text, request_hash text) TO authenticated;

--
-- Name: FUNCTION current_user_role(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.current_user_role() FROM PUBLIC;
GRANT ALL ON FUNCTION app.current_user_role() TO anon;
GRANT ALL ON FUNCTION app.current_user_role() TO authenticated;

--
-- Name: FUNCTION delete_account(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.delete_account() FROM PUBLIC;
GRANT ALL ON FUNCTION app.delete_account() TO authenticated;

--
-- Name: FUNCTION delete_message(target_message_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.delete_message(target_message_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.delete_message(target_message_id uuid) TO authenticated;

--
-- Name: FUNCTION delete_notification(target_notification_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.delete_notification(target_notification_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.delete_notification(target_notification_id uuid) TO authenticated;

--
-- Name: FUNCTION edit_message(target_message_id uuid, new_content text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.edit_message(target_message_id uuid, new_content text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.edit_message(target_message_id uuid, new_content text) TO authenticated;

--
-- Name: FUNCTION effective_config(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.effective_config() FROM PUBLIC;
GRANT ALL ON FUNCTION app.effective_config() TO authenticated;

--
-- Name: FUNCTION export_account(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.export_account() FROM PUBLIC;
GRANT ALL ON FUNCTION app.export_account() TO authenticated;

--
-- Name: FUNCTION get_product(target_product_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.get_product(target_product_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.get_product(target_product_id uuid) TO anon;
GRANT ALL ON FUNCTION app.get_product(target_product_id uuid) TO authenticated;

--
-- Name: FUNCTION has_fresh_sign_in(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.has_fresh_sign_in() FROM PUBLIC;
GRANT ALL ON FUNCTION app.has_fresh_sign_in() TO authenticated;

--
-- Name: FUNCTION has_role(required app.user_role); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.has_role(required app.user_role) FROM PUBLIC;
GRANT ALL ON FUNCTION app.has_role(required app.user_role) TO anon;
GRANT ALL ON FUNCTION app.has_role(required app.user_role) TO authenticated;

--
-- Name: FUNCTION is_admin(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.is_admin() FROM PUBLIC;
GRANT ALL ON FUNCTION app.is_admin() TO anon;
GRANT ALL ON FUNCTION app.is_admin() TO authenticated;

--
-- Name: FUNCTION is_participant(target_conversation_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.is_participant(target_conversation_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.is_participant(target_conversation_id uuid) TO authenticated;

--
-- Name: FUNCTION list_people(search text, after_name text, after_id uuid, max_rows integer); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.list_people(search text, after_name text, after_id uuid, max_rows integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.list_people(search text, after_name text, after_id uuid, max_rows integer) TO authenticated;

--
-- Name: FUNCTION list_vendors(search text, after_created_at text, after_id uuid, page_size integer); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.list_vendors(search text, after_created_at text, after_id uuid, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.list_vendors(search text, after_created_at text, after_id uuid, page_size integer) TO anon;
GRANT ALL ON FUNCTION app.list_vendors(search text, after_created_at text, after_id uuid, page_size integer) TO authenticated;

--
-- Name: FUNCTION mark_read(target_message_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.mark_read(target_message_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.mark_read(target_message_id uuid) TO authenticated;

--
-- Name: TABLE messages; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.messages TO authenticated;

--
-- Name: COLUMN messages.conversation_id; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(conversation_id) ON TABLE app.messages TO authenticated;

--
-- Name: COLUMN messages.sender_id; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(sender_id) ON TABLE app.messages TO authenticated;

--
-- Name: COLUMN messages.content; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(content),UPDATE(content) ON TABLE app.messages TO authenticated;

--
-- Name: COLUMN messages.reply_to_id; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(reply_to_id) ON TABLE app.messages TO authenticated;

--
-- Name: FUNCTION message_json(m app.messages); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.message_json(m app.messages) FROM PUBLIC;
GRANT ALL ON FUNCTION app.message_json(m app.messages) TO authenticated;

--
-- Name: FUNCTION message_object(m app.messages, attachments jsonb); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.message_object(m app.messages, attachments jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app.message_object(m app.messages, attachments jsonb) TO authenticated;

--
-- Name: FUNCTION my_conversation_ids(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.my_conversation_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION app.my_conversation_ids() TO authenticated;

--
-- Name: FUNCTION my_selling_vendor_ids(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.my_selling_vendor_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION app.my_selling_vendor_ids() TO authenticated;

--
-- Name: FUNCTION my_vendor_ids(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.my_vendor_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION app.my_vendor_ids() TO authenticated;

--
-- Name: FUNCTION notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text, only_type app.notification_type); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text, only_type app.notification_type) FROM PUBLIC;
GRANT ALL ON FUNCTION app.notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text, only_type app.notification_type) TO authenticated;

--
-- Name: FUNCTION notification_batch_progress(target_batch_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.notification_batch_progress(target_batch_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.notification_batch_progress(target_batch_id uuid) TO authenticated;

--
-- Name: TABLE notifications; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.notifications TO authenticated;

--
-- Name: COLUMN notifications.read_at; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(read_at) ON TABLE app.notifications TO authenticated;

--
-- Name: FUNCTION notification_json(n app.notifications); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.notification_json(n app.notifications) FROM PUBLIC;
GRANT ALL ON FUNCTION app.notification_json(n app.notifications) TO authenticated;

--
-- Name: FUNCTION notification_preferences_document(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.notification_preferences_document() FROM PUBLIC;
GRANT ALL ON FUNCTION app.notification_preferences_document() TO authenticated;

--
-- Name: TABLE orders; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.orders TO authenticated;

--
-- Name: FUNCTION order_json(target app.orders); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.order_json(target app.orders) FROM PUBLIC;
GRANT ALL ON FUNCTION app.order_json(target app.orders) TO authenticated;

--
-- Name: TABLE products; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.products TO authenticated;

--
-- Name: COLUMN products.vendor_id; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(vendor_id) ON TABLE app.products TO authenticated;

--
-- Name: COLUMN products.title; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(title),UPDATE(title) ON TABLE app.products TO authenticated;

--
-- Name: COLUMN products.description; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(description),UPDATE(description) ON TABLE app.products TO authenticated;

--
-- Name: COLUMN products.category; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(category),UPDATE(category) ON TABLE app.products TO authenticated;

--
-- Name: COLUMN products.tags; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(tags),UPDATE(tags) ON TABLE app.products TO authenticated;

--
-- Name: COLUMN products.images; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(images),UPDATE(images) ON TABLE app.products TO authenticated;

--
-- Name: COLUMN products.price_amount; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(price_amount),UPDATE(price_amount) ON TABLE app.products TO authenticated;

--
-- Name: COLUMN products.currency; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(currency),UPDATE(currency) ON TABLE app.products TO authenticated;

--
-- Name: COLUMN products.stock; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(stock),UPDATE(stock) ON TABLE app.products TO authenticated;

--
-- Name: COLUMN products.status; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(status),UPDATE(status) ON TABLE app.products TO authenticated;

--
-- Name: TABLE vendors; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.vendors TO authenticated;

--
-- Name: FUNCTION product_json(product app.products, vendor app.vendors); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.product_json(product app.products, vendor app.vendors) FROM PUBLIC;
GRANT ALL ON FUNCTION app.product_json(product app.products, vendor app.vendors) TO authenticated;

--
-- Name: FUNCTION public_config(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.public_config() FROM PUBLIC;
GRANT ALL ON FUNCTION app.public_config() TO anon;
GRANT ALL ON FUNCTION app.public_config() TO authenticated;

--
-- Name: FUNCTION readable_topics(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.readable_topics() FROM PUBLIC;
GRANT ALL ON FUNCTION app.readable_topics() TO authenticated;

--
-- Name: FUNCTION register_push_device(device_token text, device_platform app.push_platform, name text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.register_push_device(device_token text, device_platform app.push_platform, name text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.register_push_device(device_token text, device_platform app.push_platform, name text) TO authenticated;

--
-- Name: FUNCTION remove_participant(target_conversation_id uuid, target_user_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.remove_participant(target_conversation_id uuid, target_user_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.remove_participant(target_conversation_id uuid, target_user_id uuid) TO authenticated;

--
-- Name: FUNCTION run_settlements(cut_off timestamp with time zone); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.run_settlements(cut_off timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app.run_settlements(cut_off timestamp with time zone) TO authenticated;

--
-- Name: FUNCTION search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer) TO anon;
GRANT ALL ON FUNCTION app.search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer) TO authenticated;

--
-- Name: FUNCTION send_message(target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.send_message(target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.send_message(target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text) TO authenticated;

--
-- Name: FUNCTION send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer) TO authenticated;

--
-- Name: FUNCTION set_vendor_status(target_vendor_id uuid, new_status app.vendor_status, decision_reason text, new_commission_bps integer); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.set_vendor_status(target_vendor_id uuid, new_status app.vendor_status, decision_reason text, new_commission_bps integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.set_vendor_status(target_vendor_id uuid, new_status app.vendor_status, decision_reason text, new_commission_bps integer) TO authenticated;

--
-- Name: TABLE settlements; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.settlements TO authenticated;

--
-- Name: FUNCTION settlement_json(settlement app.settlements); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.settlement_json(settlement app.settlements) FROM PUBLIC;
GRANT ALL ON FUNCTION app.settlement_json(settlement app.settlements) TO authenticated;

--
-- Name: FUNCTION sign_out_user(target_user_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.sign_out_user(target_user_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.sign_out_user(target_user_id uuid) TO authenticated;

--
-- Name: FUNCTION store_idempotent_response(idempotency_key text, response jsonb); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.store_idempotent_response(idempotency_key text, response jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app.store_idempotent_response(idempotency_key text, response jsonb) TO authenticated;

--
-- Name: FUNCTION unlink_identity(target_identity_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.unlink_identity(target_identity_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.unlink_identity(target_identity_id uuid) TO authenticated;

--
-- Name: FUNCTION unregister_push_device(device_token text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.unregister_push_device(device_token text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.unregister_push_device(device_token text) TO authenticated;

--
-- Name: FUNCTION update_notification_preferences(patch jsonb); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.update_notification_preferences(patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app.update_notification_preferences(patch jsonb) TO authenticated;

--
-- Name: FUNCTION vendor_json(vendor app.vendors, detailed boolean); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.vendor_json(vendor app.vendors, detailed boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app.vendor_json(vendor app.vendors, detailed boolean) TO authenticated;

--
-- Name: FUNCTION wallet_address_of(target uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.wallet_address_of(target uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.wallet_address_of(target uuid) TO authenticated;

--
-- Name: FUNCTION wallet_chain_head(chain integer); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.wallet_chain_head(chain integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.wallet_chain_head(chain integer) TO authenticated;

--
-- Name: TABLE wallet_transactions; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.wallet_transactions TO authenticated;

--
-- Name: FUNCTION wallet_transaction_json(t app.wallet_transactions); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.wallet_transaction_json(t app.wallet_transactions) FROM PUBLIC;
GRANT ALL ON FUNCTION app.wallet_transaction_json(t app.wallet_transactions) TO authenticated;

--
-- Name: FUNCTION account_erase_messaging(target_user_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.account_erase_messaging(target_user_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION account_erase_store(target_user_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.account_erase_store(target_user_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION account_export(target_user_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.account_export(target_user_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION account_export_conversations(target_user_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.account_export_conversations(target_user_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION account_export_identities(target_user_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.account_export_identities(target_user_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION account_export_messages(target_user_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.account_export_messages(target_user_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION account_export_notifications(target_user_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.account_export_notifications(target_user_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION account_export_orders(target_user_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.account_export_orders(target_user_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION account_export_preferences(target_user_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.account_export_preferences(target_user_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION account_export_profile(target_user_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.account_export_profile(target_user_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION account_export_sessions(target_user_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.account_export_sessions(target_user_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION account_export_vendor(target_user_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.account_export_vendor(target_user_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION account_export_wallet(target_user_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.account_export_wallet(target_user_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION after_order_change(target app.orders, event text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.after_order_change(target app.orders, event text) FROM PUBLIC;

--
-- Name: FUNCTION after_vendor_change(vendor app.vendors, decision_reason text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.after_vendor_change(vendor app.vendors, decision_reason text) FROM PUBLIC;

--
-- Name: FUNCTION allocate_wallet_nonce(wallet uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.allocate_wallet_nonce(wallet uuid) FROM PUBLIC;

--
-- Name: FUNCTION announce_batch_chunk(target_batch_id uuid, target_chunk integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.announce_batch_chunk(target_batch_id uuid, target_chunk integer) FROM PUBLIC;

--
-- Name: FUNCTION announce_wallet(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.announce_wallet() FROM PUBLIC;

--
-- Name: FUNCTION apply_payment_intent(intent_id text, intent_status text, intent_amount bigint, intent_currency text, attempt_failed boolean); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.apply_payment_intent(intent_id text, intent_status text, intent_amount bigint, intent_currency text, attempt_failed boolean) FROM PUBLIC;

--
-- Name: FUNCTION apply_payout_account(account text, new_status app.payouts_status); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.apply_payout_account(account text, new_status app.payouts_status) FROM PUBLIC;

--
-- Name: FUNCTION assign_message_seq(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.assign_message_seq() FROM PUBLIC;

--
-- Name: FUNCTION cancel_unpaid_checkout(target_checkout_id uuid, by_actor app.order_actor, by_user uuid, cancel_reason text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.cancel_unpaid_checkout(target_checkout_id uuid, by_actor app.order_actor, by_user uuid, cancel_reason text) FROM PUBLIC;

--
-- Name: FUNCTION checkout_json(target_checkout_id uuid, client_secret text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.checkout_json(target_checkout_id uuid, client_secret text) FROM PUBLIC;

--
-- Name: FUNCTION claim_jobs(kinds text[], worker text, batch integer, lease interval); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.claim_jobs(kinds text[], worker text, batch integer, lease interval) FROM PUBLIC;

--
-- Name: FUNCTION claim_message_digest(target_conversation_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.claim_message_digest(target_conversation_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION close_checkout_if_settled(target_checkout_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.close_checkout_if_settled(target_checkout_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION collect_orphan_attachments(older_than interval); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.collect_orphan_attachments(older_than interval) FROM PUBLIC;

--
-- Name: FUNCTION complete_delivered_orders(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.complete_delivered_orders() FROM PUBLIC;

--
-- Name: FUNCTION complete_job(job_id bigint, token uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.complete_job(job_id bigint, token uuid) FROM PUBLIC;

--
-- Name: FUNCTION config_defaults(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.config_defaults() FROM PUBLIC;

--
-- Name: FUNCTION conversation_notifications(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.conversation_notifications() FROM PUBLIC;

--
-- Name: FUNCTION conversation_read_notifications(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.conversation_read_notifications() FROM PUBLIC;

--
-- Name: FUNCTION correct_spelling(search text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.correct_spelling(search text) FROM PUBLIC;

--
-- Name: FUNCTION count_catalog(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.count_catalog() FROM PUBLIC;

--
-- Name: FUNCTION count_new_notifications(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.count_new_notifications() FROM PUBLIC;

--
-- Name: FUNCTION create_checkout_as(claims text, requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.create_checkout_as(claims text, requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) FROM PUBLIC;

--
-- Name: FUNCTION create_wallet_transfer(owner uuid, chain integer, kind app.wallet_token_kind, token text, symbol text, token_full_name text, decimals integer, recipient text, recipient_user uuid, transfer_amount numeric, transfer_gas_limit numeric, transfer_max_fee numeric, token_balance numeric, native_balance numeric); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.create_wallet_transfer(owner uuid, chain integer, kind app.wallet_token_kind, token text, symbol text, token_full_name text, decimals integer, recipient text, recipient_user uuid, transfer_amount numeric, transfer_gas_limit numeric, transfer_max_fee numeric, token_balance numeric, native_balance numeric) FROM PUBLIC;

--
-- Name: FUNCTION digest_conversation(target_conversation_id uuid, upto_seq bigint); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.digest_conversation(target_conversation_id uuid, upto_seq bigint) FROM PUBLIC;

--
-- Name: FUNCTION emit_ephemeral(topic text, event text, payload jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.emit_ephemeral(topic text, event text, payload jsonb) FROM PUBLIC;

--
-- Name: FUNCTION emit_event(topic text, event text, payload jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.emit_event(topic text, event text, payload jsonb) FROM PUBLIC;

--
-- Name: FUNCTION emit_order_event(target app.orders, event text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.emit_order_event(target app.orders, event text) FROM PUBLIC;

--
-- Name: FUNCTION enqueue_job(kind text, payload jsonb, run_at timestamp with time zone, dedupe_key text, max_attempts integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.enqueue_job(kind text, payload jsonb, run_at timestamp with time zone, dedupe_key text, max_attempts integer) FROM PUBLIC;

--
-- Name: FUNCTION expire_reservations(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.expire_reservations() FROM PUBLIC;

--
-- Name: FUNCTION expire_wallet_transfers(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.expire_wallet_transfers() FROM PUBLIC;

--
-- Name: FUNCTION fail_job(job_id bigint, token uuid, error text, retry_after interval, permanent boolean); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.fail_job(job_id bigint, token uuid, error text, retry_after interval, permanent boolean) FROM PUBLIC;

--
-- Name: FUNCTION fail_settlement(target_settlement_id uuid, why text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.fail_settlement(target_settlement_id uuid, why text) FROM PUBLIC;

--
-- Name: FUNCTION finish_batch_chunk(target_batch_id uuid, target_chunk integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.finish_batch_chunk(target_batch_id uuid, target_chunk integer) FROM PUBLIC;

--
-- Name: FUNCTION finish_stripe_event(event_id text, event_outcome text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.finish_stripe_event(event_id text, event_outcome text) FROM PUBLIC;

--
-- Name: FUNCTION finish_wallet_transaction(target_id uuid, outcome app.wallet_transaction_status, mined_block bigint, mined_block_hash text, paid_fee numeric, failure text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.finish_wallet_transaction(target_id uuid, outcome app.wallet_transaction_status, mined_block bigint, mined_block_hash text, paid_fee numeric, failure text) FROM PUBLIC;

--
-- Name: FUNCTION format_token_amount(amount numeric, decimals integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.format_token_amount(amount numeric, decimals integer) FROM PUBLIC;

--
-- Name: FUNCTION guard_attachment_update(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_attachment_update() FROM PUBLIC;

--
-- Name: FUNCTION guard_message_update(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_message_update() FROM PUBLIC;

--
-- Name: FUNCTION guard_notification_read(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_notification_read() FROM PUBLIC;

--
-- Name: FUNCTION guard_product_write(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_product_write() FROM PUBLIC;

--
-- Name: FUNCTION guard_read_mark(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_read_mark() FROM PUBLIC;

--
-- Name: FUNCTION guard_session_update(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_session_update() FROM PUBLIC;

--
-- Name: FUNCTION guard_settlement_update(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_settlement_update() FROM PUBLIC;

--
-- Name: FUNCTION guard_user_delete(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_user_delete() FROM PUBLIC;

--
-- Name: FUNCTION guard_user_update(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_user_update() FROM PUBLIC;

--
-- Name: FUNCTION hit_rate_limit(bucket_key text, window_seconds integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.hit_rate_limit(bucket_key text, window_seconds integer) FROM PUBLIC;

--
-- Name: FUNCTION hold_settlement(target_settlement_id uuid, why text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.hold_settlement(target_settlement_id uuid, why text) FROM PUBLIC;

--
-- Name: FUNCTION idempotent_answer(owner uuid, idempotency_key text, key_scope text, body_hash text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.idempotent_answer(owner uuid, idempotency_key text, key_scope text, body_hash text) FROM PUBLIC;

--
-- Name: TABLE users; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.users TO authenticated;

--
-- Name: COLUMN users.name; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(name) ON TABLE app.users TO authenticated;

--
-- Name: COLUMN users.image; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(image) ON TABLE app.users TO authenticated;

--
-- Name: COLUMN users.role; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(role) ON TABLE app.users TO authenticated;

--
-- Name: COLUMN users.status; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(status) ON TABLE app.users TO authenticated;

--
-- Name: FUNCTION in_audience(u app.users, audience jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.in_audience(u app.users, audience jsonb) FROM PUBLIC;

--
-- Name: FUNCTION inbox_page_for_session(caller_session uuid, caller_user uuid, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.inbox_page_for_session(caller_session uuid, caller_user uuid, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer) FROM PUBLIC;

--
-- Name: TABLE wallets; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.wallets TO authenticated;

--
-- Name: FUNCTION insert_wallet(new_wallet_id uuid, new_owner uuid, new_address text, master_key_id text, sealed_data_key bytea, sealed_private_key bytea); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.insert_wallet(new_wallet_id uuid, new_owner uuid, new_address text, master_key_id text, sealed_data_key bytea, sealed_private_key bytea) FROM PUBLIC;

--
-- Name: FUNCTION iso_time(t timestamp with time zone); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.iso_time(t timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION job_backoff(attempts integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.job_backoff(attempts integer) FROM PUBLIC;

--
-- Name: FUNCTION jsonb_merge_deep(base jsonb, patch jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.jsonb_merge_deep(base jsonb, patch jsonb) FROM PUBLIC;

--
-- Name: FUNCTION lock_admin_caller(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.lock_admin_caller() FROM PUBLIC;

--
-- Name: FUNCTION lock_order_products(order_ids uuid[]); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.lock_order_products(order_ids uuid[]) FROM PUBLIC;

--
-- Name: FUNCTION mark_message_digest(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.mark_message_digest() FROM PUBLIC;

--
-- Name: FUNCTION message_events(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.message_events() FROM PUBLIC;

--
-- Name: FUNCTION move_order(target app.orders, to_status app.order_status, by_actor app.order_actor, by_user uuid, move_reason text, tracking text, ship_carrier text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.move_order(target app.orders, to_status app.order_status, by_actor app.order_actor, by_user uuid, move_reason text, tracking text, ship_carrier text) FROM PUBLIC;

--
-- Name: FUNCTION next_job_at(kinds text[]); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.next_job_at(kinds text[]) FROM PUBLIC;

--
-- Name: FUNCTION note_chain_head(chain integer, head bigint); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.note_chain_head(chain integer, head bigint) FROM PUBLIC;

--
-- Name: FUNCTION notification_deleted_event(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notification_deleted_event() FROM PUBLIC;

--
-- Name: FUNCTION notification_read_event(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notification_read_event() FROM PUBLIC;

--
-- Name: FUNCTION notification_type_defaults(notification_type app.notification_type); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notification_type_defaults(notification_type app.notification_type) FROM PUBLIC;

--
-- Name: FUNCTION notify(recipient uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notify(recipient uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text) FROM PUBLIC;

--
-- Name: FUNCTION notify_many(recipients uuid[], notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notify_many(recipients uuid[], notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text) FROM PUBLIC;

--
-- Name: FUNCTION notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority, collapse_key text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority, collapse_key text) FROM PUBLIC;

--
-- Name: FUNCTION participant_events(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.participant_events() FROM PUBLIC;

--
-- Name: FUNCTION payout_to_make(target_settlement_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.payout_to_make(target_settlement_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION product_document(title text, tags text[], category text, description text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.product_document(title text, tags text[], category text, description text) FROM PUBLIC;

--
-- Name: FUNCTION prune_auth_state(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.prune_auth_state() FROM PUBLIC;

--
-- Name: FUNCTION prune_events(keep_days integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.prune_events(keep_days integer) FROM PUBLIC;

--
-- Name: FUNCTION prune_idempotency_keys(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.prune_idempotency_keys() FROM PUBLIC;

--
-- Name: FUNCTION prune_jobs(done_for interval, dead_for interval); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.prune_jobs(done_for interval, dead_for interval) FROM PUBLIC;

--
-- Name: FUNCTION prune_logs(keep_days integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.prune_logs(keep_days integer) FROM PUBLIC;

--
-- Name: FUNCTION queue_storage_deletion(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.queue_storage_deletion() FROM PUBLIC;

--
-- Name: FUNCTION quiet_until(quiet_start time without time zone, quiet_end time without time zone, time_zone text, at timestamp with time zone); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.quiet_until(quiet_start time without time zone, quiet_end time without time zone, time_zone text, at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION read_mark_events(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.read_mark_events() FROM PUBLIC;

--
-- Name: FUNCTION record_deliveries(outcomes jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.record_deliveries(outcomes jsonb) FROM PUBLIC;

--
-- Name: FUNCTION record_payout(target_settlement_id uuid, transfer text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.record_payout(target_settlement_id uuid, transfer text) FROM PUBLIC;

--
-- Name: FUNCTION record_refund_result(target_order_id uuid, refund_id text, result app.refund_status, failure text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.record_refund_result(target_order_id uuid, refund_id text, result app.refund_status, failure text) FROM PUBLIC;

--
-- Name: FUNCTION record_role_change(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.record_role_change() FROM PUBLIC;

--
-- Name: FUNCTION record_security_event(event_type text, event_severity app.security_severity, subject_user_id uuid, event_details jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.record_security_event(event_type text, event_severity app.security_severity, subject_user_id uuid, event_details jsonb) FROM PUBLIC;

--
-- Name: FUNCTION record_stripe_event(event_id text, event_type text, event_livemode boolean, event_payload jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.record_stripe_event(event_id text, event_type text, event_livemode boolean, event_payload jsonb) FROM PUBLIC;

--
-- Name: FUNCTION refresh_wallet_nfts(chain integer, holders text[], contracts text[], token_ids numeric[]); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.refresh_wallet_nfts(chain integer, holders text[], contracts text[], token_ids numeric[]) FROM PUBLIC;

--
-- Name: FUNCTION refund_to_make(target_order_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.refund_to_make(target_order_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION refuse_ledger_change(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.refuse_ledger_change() FROM PUBLIC;

--
-- Name: FUNCTION request_refund(target app.orders, refund_reason text, requested uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.request_refund(target app.orders, refund_reason text, requested uuid) FROM PUBLIC;

--
-- Name: FUNCTION retry_dead_job(job_id bigint); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.retry_dead_job(job_id bigint) FROM PUBLIC;

--
-- Name: FUNCTION revoke_sessions(target_user_id uuid, why text, keep_session_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.revoke_sessions(target_user_id uuid, why text, keep_session_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION role_change_notification(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.role_change_notification() FROM PUBLIC;

--
-- Name: FUNCTION rollback_chain_index(chain integer, fork bigint, fork_hash text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.rollback_chain_index(chain integer, fork bigint, fork_hash text) FROM PUBLIC;

--
-- Name: FUNCTION run_scheduled_settlements(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.run_scheduled_settlements() FROM PUBLIC;

--
-- Name: FUNCTION send_message_as(claims text, target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.send_message_as(claims text, target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text) FROM PUBLIC;

--
-- Name: FUNCTION set_payout_account(target_vendor_id uuid, account_id text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.set_payout_account(target_vendor_id uuid, account_id text) FROM PUBLIC;

--
-- Name: FUNCTION settle(cut_off timestamp with time zone, started uuid, wait boolean); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.settle(cut_off timestamp with time zone, started uuid, wait boolean) FROM PUBLIC;

--
-- Name: FUNCTION store_currency(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.store_currency() FROM PUBLIC;

--
-- Name: FUNCTION submit_wallet_transaction(target_id uuid, signed_nonce bigint, signed_hash text, raw text, signed_max_fee numeric, signed_priority_fee numeric); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.submit_wallet_transaction(target_id uuid, signed_nonce bigint, signed_hash text, raw text, signed_max_fee numeric, signed_priority_fee numeric) FROM PUBLIC;

--
-- Name: FUNCTION sync_wallet_nonce(wallet uuid, chain_nonce bigint); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.sync_wallet_nonce(wallet uuid, chain_nonce bigint) FROM PUBLIC;

--
-- Name: FUNCTION take_deliveries(notification_ids uuid[]); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.take_deliveries(notification_ids uuid[]) FROM PUBLIC;

--
-- Name: FUNCTION touch_push_device(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.touch_push_device() FROM PUBLIC;

--
-- Name: FUNCTION touch_updated_at(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.touch_updated_at() FROM PUBLIC;

--
-- Name: FUNCTION touch_wallet_transaction(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.touch_wallet_transaction() FROM PUBLIC;

--
-- Name: FUNCTION validate_notification_preferences(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.validate_notification_preferences() FROM PUBLIC;

--
-- Name: FUNCTION wallet_transaction_events(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.wallet_transaction_events() FROM PUBLIC;

--
-- Name: FUNCTION wants(choices jsonb, notification_type app.notification_type, channel text, defaults jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.wants(choices jsonb, notification_type app.notification_type, channel text, defaults jsonb) FROM PUBLIC;

--
-- Name: FUNCTION write_notification_batch(target_batch_id uuid, chunk_size integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.write_notification_batch(target_batch_id uuid, chunk_size integer) FROM PUBLIC;

--
-- Name: TABLE access_logs; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.access_logs TO authenticated;

--
-- Name: TABLE chain_tokens; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.chain_tokens TO authenticated;

--
-- Name: TABLE checkouts; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.checkouts TO authenticated;

--
-- Name: TABLE config_versions; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.config_versions TO authenticated;

--
-- Name: COLUMN config_versions.version; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(version) ON TABLE app.config_versions TO authenticated;

--
-- Name: COLUMN config_versions.config; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(config) ON TABLE app.config_versions TO authenticated;

--
-- Name: COLUMN config_versions.diff; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(diff) ON TABLE app.config_versions TO authenticated;

--
-- Name: COLUMN config_versions.reason; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(reason) ON TABLE app.config_versions TO authenticated;

--
-- Name: COLUMN config_versions.changed_by; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(changed_by) ON TABLE app.config_versions TO authenticated;

--
-- Name: TABLE conversation_participants; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.conversation_participants TO authenticated;

--
-- Name: COLUMN conversation_participants.last_read_seq; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(last_read_seq) ON TABLE app.conversation_participants TO authenticated;

--
-- Name: COLUMN conversation_participants.last_read_message_id; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(last_read_message_id) ON TABLE app.conversation_participants TO authenticated;

--
-- Name: COLUMN conversation_participants.last_read_at; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(last_read_at) ON TABLE app.conversation_participants TO authenticated;

--
-- Name: TABLE conversations; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.conversations TO authenticated;

--
-- Name: TABLE events; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.events TO authenticated;

--
-- Name: TABLE identities; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.identities TO authenticated;

--
-- Name: TABLE message_versions; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.message_versions TO authenticated;

--
-- Name: TABLE notification_batches; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.notification_batches TO authenticated;

--
-- Name: TABLE notification_counters; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.notification_counters TO authenticated;

--
-- Name: TABLE notification_preferences; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.notification_preferences TO authenticated;

--
-- Name: COLUMN notification_preferences.user_id; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(user_id) ON TABLE app.notification_preferences TO authenticated;

--
-- Name: COLUMN notification_preferences.types; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(types),UPDATE(types) ON TABLE app.notification_preferences TO authenticated;

--
-- Name: COLUMN notification_preferences.quiet_start; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(quiet_start),UPDATE(quiet_start) ON TABLE app.notification_preferences TO authenticated;

--
-- Name: COLUMN notification_preferences.quiet_end; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(quiet_end),UPDATE(quiet_end) ON TABLE app.notification_preferences TO authenticated;

--
-- Name: COLUMN notification_preferences.quiet_time_zone; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(quiet_time_zone),UPDATE(quiet_time_zone) ON TABLE app.notification_preferences TO authenticated;

--
-- Name: TABLE order_history; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.order_history TO authenticated;

--
-- Name: TABLE order_items; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.order_items TO authenticated;

--
-- Name: TABLE order_transitions; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.order_transitions TO authenticated;

--
-- Name: COLUMN push_devices.id; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT(id) ON TABLE app.push_devices TO authenticated;

--
-- Name: COLUMN push_devices.user_id; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT(user_id) ON TABLE app.push_devices TO authenticated;

--
-- Name: COLUMN push_devices.platform; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT(platform) ON TABLE app.push_devices TO authenticated;

--
-- Name: COLUMN push_devices.device_name; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT(device_name) ON TABLE app.push_devices TO authenticated;

--
-- Name: COLUMN push_devices.created_at; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT(created_at) ON TABLE app.push_devices TO authenticated;

--
-- Name: COLUMN push_devices.updated_at; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT(updated_at) ON TABLE app.push_devices TO authenticated;

--
-- Name: TABLE refunds; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.refunds TO authenticated;

--
-- Name: TABLE security_events; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.security_events TO authenticated;

--
-- Name: TABLE sessions; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.sessions TO authenticated;

--
-- Name: COLUMN sessions.revoked_at; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(revoked_at) ON TABLE app.sessions TO authenticated;

--
-- Name: COLUMN sessions.revoked_reason; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(revoked_reason) ON TABLE app.sessions TO authenticated;

--
-- Name: TABLE settlement_lines; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.settlement_lines TO authenticated;

--
-- Name: TABLE settlement_runs; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.settlement_runs TO authenticated;

--
-- Name: TABLE vendor_decisions; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.vendor_decisions TO authenticated;

--
-- Name: TABLE wallet_nfts; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.wallet_nfts TO authenticated;

--
-- Name: TABLE wallet_tokens; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.wallet_tokens TO authenticated;

--
-- PostgreSQL database dump complete
--

--
-- Policies on realtime.messages (the table is hosted Supabase's; locally sql/local/ makes it)
--

CREATE POLICY realtime_messages_insert_topic ON realtime.messages AS PERMISSIVE FOR INSERT TO authenticated
  WITH CHECK (((topic = ( SELECT realtime.topic() AS topic)) AND (extension = ANY (ARRAY['broadcast'::text, 'presence'::text])) AND ( SELECT app.can_write_topic(( SELECT realtime.topic() AS topic)) AS can_write_topic)));
CREATE POLICY realtime_messages_select_topic ON realtime.messages AS PERMISSIVE FOR SELECT TO authenticated
  USING (((topic = ( SELECT realtime.topic() AS topic)) AND ( SELECT app.can_read_topic(( SELECT realtime.topic() AS topic)) AS can_read_topic)));

--
-- pg_cron jobs (name, schedule, command), created by the migrations
--

-- agora-collect-orphan-attachments  23 * * * *  select app_private.collect_orphan_attachments()
-- agora-complete-delivered-orders  29 * * * *  select app_private.complete_delivered_orders()
-- agora-expire-reservations  * * * * *  select app_private.expire_reservations()
-- agora-expire-wallet-transfers  * * * * *  select app_private.expire_wallet_transfers()
-- agora-follow-chain  * * * * *  
--   select app_private.enqueue_job('wallet.index', '{}', now(),
--     'wallet.index:' || to_char(date_trunc('minute', now()), 'YYYY-MM-DD"T"HH24:MI'), 3)
--   where not exists (
--     select 1 from app_private.chain_heads h where h.updated_at > now() - interval '1 minute'
--   )
-- 
-- agora-prune-auth-state  */15 * * * *  select app_private.prune_auth_state()
-- agora-prune-events  */10 * * * *  select app_private.prune_events(3)
-- agora-prune-idempotency-keys  */10 * * * *  select app_private.prune_idempotency_keys()
-- agora-prune-jobs  41 * * * *  select app_private.prune_jobs()
-- agora-prune-logs  17 3 * * *  select app_private.prune_logs(90)
-- agora-settlements  0 * * * *  select app_private.run_scheduled_settlements()
