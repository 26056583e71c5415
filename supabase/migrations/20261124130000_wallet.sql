/*
 * The custodial wallet: one wallet per user (its private key encrypted under a per-wallet data
 * key that a master key outside the database wraps), the tokens a user follows, transactions out
 * (pending → submitted → confirmed | failed | expired) and in (indexed from the chain), the
 * per-wallet nonce that signing allocates, what the chain follower has indexed (block hashes for
 * reorgs) and the NFTs the platform's wallets hold.
 *
 * Where the secrets are: app_private.wallet_keys holds only ciphertext (AES-256-GCM); the master
 * key that unwraps the data keys is AGORA_WALLET_MASTER_KEY, which never reaches the database.
 * Every write here is a named server path of the api function (docs/authorization.md): users
 * read their own rows through RLS and write nothing directly.
 *
 * Tables: app.wallets, app.chain_tokens, app.wallet_tokens, app.wallet_transactions,
 * app.wallet_nfts; app_private.wallet_keys, wallet_nonces, wallet_signed_transactions,
 * chain_cursors, chain_blocks, chain_heads, nft_transfers, nft_tokens, nft_collections.
 * Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Types
-- ---------------------------------------------------------------------------------------------

create type app.wallet_token_kind as enum ('native', 'utility', 'governance', 'staking', 'custom');
create type app.wallet_transaction_status as enum ('pending', 'submitted', 'confirmed', 'failed', 'expired');
create type app.wallet_transaction_direction as enum ('out', 'in');
create type app.nft_standard as enum ('ERC721', 'ERC1155');
comment on type app.wallet_token_kind is
  'The five kinds of token a wallet holds: the chain''s native currency, the platform''s utility, governance and staking-rewards ERC-20s, and ERC-20s a user adds.';
comment on type app.wallet_transaction_status is
  'pending: validated, waiting for the owner''s confirm until it expires; submitted: signed with its nonce and sent (or being sent); confirmed: mined with enough confirmations; failed: reverted, or refused by the node; expired: never confirmed in time. Incoming transfers are submitted until they have enough confirmations.';
comment on type app.wallet_transaction_direction is
  'out: sent from the wallet through the platform; in: a transfer to the wallet seen on the chain.';
comment on type app.nft_standard is 'The token standards of the NFT collections the platform indexes.';

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

create table app.wallets (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null unique references app.users (id) on delete cascade,
  address text not null unique check (address ~ '^0x[0-9a-fA-F]{40}$'),
  created_at timestamptz not null default now(),
  exported_at timestamptz
);
comment on table app.wallets is
  'One custodial wallet per user: its address (EIP-55 checksummed) and when its key was last exported. The key itself is in app_private.wallet_keys, encrypted.';

/*
 * Envelope encryption: the private key is sealed (AES-256-GCM) with a data key of its own, and
 * the data key is sealed with a master key that lives outside the database (key_id names which).
 * Both seals bind the wallet id and address as additional authenticated data, so a ciphertext
 * copied onto another wallet's row does not open. Rotating the master key re-seals only the data
 * key (wrapped_data_key, key_id); the private key's ciphertext never changes.
 */
create table app_private.wallet_keys (
  wallet_id uuid primary key references app.wallets (id) on delete cascade,
  scheme text not null default 'v1' check (scheme = 'v1'),
  key_id text not null check (key_id ~ '^[0-9a-f]{16}$'),
  wrapped_data_key bytea not null check (octet_length(wrapped_data_key) = 60),
  encrypted_private_key bytea not null check (octet_length(encrypted_private_key) = 60),
  created_at timestamptz not null default now(),
  rewrapped_at timestamptz
);
comment on table app_private.wallet_keys is
  'Wallet private keys, only as ciphertext: each sealed with AES-256-GCM under a per-wallet data key (12-byte IV, 32-byte key, 16-byte tag), the data key sealed under the master key named by key_id; wallet id and address are the additional authenticated data of both. No API role can read it.';
comment on column app_private.wallet_keys.key_id is
  'The master key that wraps this data key: the first 16 hex digits of its SHA-256, so the rotation command knows what still needs re-wrapping.';

/* The next nonce of each wallet: allocating one locks the row until the signed transaction commits. */
create table app_private.wallet_nonces (
  wallet_id uuid primary key references app.wallets (id) on delete cascade,
  next_nonce bigint not null default 0 check (next_nonce >= 0),
  updated_at timestamptz not null default now()
);
comment on table app_private.wallet_nonces is
  'The next transaction nonce of each wallet. app_private.allocate_wallet_nonce takes it and moves it on in the confirming transaction: concurrent confirms of one wallet wait on this row, and a confirm that rolls back gives its nonce back, so nonces are distinct and gapless.';

/* ERC-20 metadata read from the chain (name, symbol, decimals): the platform's tokens and the ones users added. */
create table app.chain_tokens (
  chain_id integer not null check (chain_id > 0),
  address text not null check (address ~ '^0x[0-9a-fA-F]{40}$'),
  symbol text not null check (char_length(symbol) between 1 and 64),
  name text not null check (char_length(name) between 1 and 200),
  decimals smallint not null check (decimals between 0 and 77),
  created_at timestamptz not null default now(),
  primary key (chain_id, address)
);
comment on table app.chain_tokens is
  'ERC-20 tokens as the chain describes them (symbol, name, decimals), read and checked once by the server: the platform''s tokens and every token a user added. Public chain data, readable from SUBSCRIBER up.';

create table app.wallet_tokens (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references app.users (id) on delete cascade,
  chain_id integer not null,
  address text not null,
  created_at timestamptz not null default now(),
  unique (user_id, chain_id, address),
  foreign key (chain_id, address) references app.chain_tokens (chain_id, address) on delete cascade
);
comment on table app.wallet_tokens is
  'The custom ERC-20s each user follows (besides native currency and the platform''s tokens, which everyone has); added only after the server checked the contract on the chain.';

create table app.wallet_transactions (
  id uuid primary key default gen_random_uuid(),
  wallet_id uuid not null references app.wallets (id) on delete cascade,
  user_id uuid not null references app.users (id) on delete cascade,
  direction app.wallet_transaction_direction not null,
  status app.wallet_transaction_status not null,
  chain_id integer not null check (chain_id > 0),
  token_kind app.wallet_token_kind not null,
  token_address text check (token_address ~ '^0x[0-9a-fA-F]{40}$'),
  token_symbol text not null,
  token_name text not null,
  token_decimals smallint not null check (token_decimals between 0 and 77),
  from_address text not null check (from_address ~ '^0x[0-9a-fA-F]{40}$'),
  to_address text not null check (to_address ~ '^0x[0-9a-fA-F]{40}$'),
  to_user_id uuid references app.users (id) on delete set null,
  amount numeric(78, 0) not null check (amount > 0),
  hash text check (hash ~ '^0x[0-9a-f]{64}$'),
  nonce bigint check (nonce >= 0),
  log_index integer check (log_index >= -1),
  block_number bigint check (block_number >= 0),
  block_hash text check (block_hash ~ '^0x[0-9a-f]{64}$'),
  gas_limit numeric(78, 0) check (gas_limit > 0),
  max_fee_per_gas numeric(78, 0) check (max_fee_per_gas >= 0),
  max_priority_fee_per_gas numeric(78, 0) check (max_priority_fee_per_gas >= 0),
  fee numeric(78, 0) check (fee >= 0),
  error text check (char_length(error) <= 500),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  expires_at timestamptz,
  submitted_at timestamptz,
  confirmed_at timestamptz,
  constraint wallet_transactions_native_address check ((token_kind = 'native') = (token_address is null)),
  constraint wallet_transactions_out_shape check (
    direction = 'in' or (expires_at is not null and log_index is null and gas_limit is not null)
  ),
  constraint wallet_transactions_in_shape check (
    direction = 'out' or (hash is not null and log_index is not null and block_number is not null)
  ),
  constraint wallet_transactions_signed check (status in ('pending', 'expired') or direction = 'in' or (hash is not null and nonce is not null))
);
comment on table app.wallet_transactions is
  'A wallet''s history: transfers out (created pending by the owner, signed and sent on confirm, watched until mined) and transfers in (ERC-20 Transfer logs of known tokens and native value sent to the wallet, indexed from the chain). The token is kept as it was (kind, symbol, name, decimals). Written only by server paths; owners read their own.';
comment on column app.wallet_transactions.log_index is
  'Incoming only: the ERC-20 Transfer log''s index in its block, or -1 for native value (one per transaction).';
comment on column app.wallet_transactions.gas_limit is
  'Outgoing only: estimated when the transfer is created; with max_fee_per_gas it is the gas reserved from the native balance until the transfer ends.';

/* The signed bytes of each submitted transaction: a retry sends exactly these again. */
create table app_private.wallet_signed_transactions (
  transaction_id uuid primary key references app.wallet_transactions (id) on delete cascade,
  raw text not null check (raw ~ '^0x[0-9a-f]+$'),
  broadcasts integer not null default 0 check (broadcasts >= 0),
  last_broadcast_at timestamptz,
  created_at timestamptz not null default now()
);
comment on table app_private.wallet_signed_transactions is
  'The signed raw transaction of every submitted transfer, stored with its hash in the confirming transaction before anything is broadcast: a retry after an outage sends the same bytes, so a transfer can never go out twice.';

create table app_private.chain_cursors (
  chain_id integer primary key,
  block_number bigint not null check (block_number >= -1),
  block_hash text,
  updated_at timestamptz not null default now()
);
comment on table app_private.chain_cursors is
  'Where the chain follower stands: the last block it indexed and that block''s hash. Moved with a compare-and-set, so two followers never index the same blocks; a restart resumes here.';

create table app_private.chain_blocks (
  chain_id integer not null,
  number bigint not null check (number >= 0),
  hash text not null check (hash ~ '^0x[0-9a-f]{64}$'),
  parent_hash text not null check (parent_hash ~ '^0x[0-9a-f]{64}$'),
  indexed_at timestamptz not null default now(),
  primary key (chain_id, number)
);
comment on table app_private.chain_blocks is
  'The hashes of the last blocks the follower indexed (the last 128), to find where the chain forked when a reorganization replaced them.';

create table app_private.chain_heads (
  chain_id integer primary key,
  block_number bigint not null check (block_number >= 0),
  updated_at timestamptz not null default now()
);
comment on table app_private.chain_heads is
  'The highest block seen by the follower or a transaction watcher: what confirmations are counted against.';

create table app_private.nft_transfers (
  chain_id integer not null,
  block_number bigint not null,
  block_hash text not null,
  transaction_hash text not null,
  log_index integer not null,
  batch_index integer not null default 0,
  standard app.nft_standard not null,
  contract text not null,
  token_id numeric(78, 0) not null check (token_id >= 0),
  from_address text not null,
  to_address text not null,
  amount numeric(78, 0) not null check (amount >= 0),
  primary key (chain_id, transaction_hash, log_index, batch_index)
);
comment on table app_private.nft_transfers is
  'ERC-721 Transfer and ERC-1155 TransferSingle/TransferBatch logs of the configured collections that involve a platform wallet: the source holdings are computed from, and what a reorganization rolls back.';

create table app_private.nft_tokens (
  chain_id integer not null,
  contract text not null,
  token_id numeric(78, 0) not null,
  token_uri text,
  name text,
  image text,
  fetched_at timestamptz not null default now(),
  primary key (chain_id, contract, token_id)
);
comment on table app_private.nft_tokens is
  'Token URI metadata per NFT, read once from the chain (data: URIs decoded; other URIs kept for clients to fetch).';

create table app_private.nft_collections (
  chain_id integer not null,
  contract text not null,
  standard app.nft_standard not null,
  name text,
  symbol text,
  primary key (chain_id, contract)
);
comment on table app_private.nft_collections is 'Name and symbol of each indexed NFT collection, read once from the chain.';

create table app.wallet_nfts (
  wallet_id uuid not null references app.wallets (id) on delete cascade,
  user_id uuid not null references app.users (id) on delete cascade,
  chain_id integer not null,
  contract text not null check (contract ~ '^0x[0-9a-fA-F]{40}$'),
  token_id numeric(78, 0) not null check (token_id >= 0),
  standard app.nft_standard not null,
  balance numeric(78, 0) not null check (balance > 0),
  token_uri text,
  name text,
  image text,
  collection_name text,
  collection_symbol text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (wallet_id, chain_id, contract, token_id)
);
comment on table app.wallet_nfts is
  'What each wallet holds of the configured NFT collections, computed from their transfer logs (app_private.nft_transfers) by the follower, with the token''s metadata. Owners read their own.';

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

create index wallets_created_at_idx on app.wallets (created_at);
create index wallet_tokens_chain_address_idx on app.wallet_tokens (chain_id, address);
-- The owner's history, newest first (the list's keyset).
create index wallet_transactions_user_order_idx on app.wallet_transactions (user_id, created_at desc, id desc);
create index wallet_transactions_wallet_id_idx on app.wallet_transactions (wallet_id);
create index wallet_transactions_to_user_id_idx on app.wallet_transactions (to_user_id) where to_user_id is not null;
-- What is still in flight per wallet: the funds check sums it.
create index wallet_transactions_in_flight_idx on app.wallet_transactions (wallet_id)
  where status in ('pending', 'submitted');
create index wallet_transactions_pending_expiry_idx on app.wallet_transactions (expires_at) where status = 'pending';
-- A nonce is used once per wallet; an incoming log is recorded once per wallet.
create unique index wallet_transactions_nonce_key on app.wallet_transactions (wallet_id, nonce) where nonce is not null;
create unique index wallet_transactions_incoming_key on app.wallet_transactions (wallet_id, hash, log_index)
  where direction = 'in';
create index wallet_transactions_block_idx on app.wallet_transactions (chain_id, block_number) where block_number is not null;
create index wallet_transactions_created_at_brin on app.wallet_transactions using brin (created_at);
create index nft_transfers_block_idx on app_private.nft_transfers (chain_id, block_number);
create index nft_transfers_to_idx on app_private.nft_transfers (chain_id, to_address, contract, token_id);
create index nft_transfers_from_idx on app_private.nft_transfers (chain_id, from_address, contract, token_id);
create index wallet_nfts_user_order_idx on app.wallet_nfts (user_id, created_at desc, contract desc, token_id desc);

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

/* An amount in base units as whole tokens, for people: 1500000000000000000 with 18 decimals is 1.5. */
create function app_private.format_token_amount(amount numeric, decimals integer) returns text
language plpgsql immutable
set search_path = ''
as $$
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
comment on function app_private.format_token_amount(numeric, integer) is
  'A base-unit amount as whole tokens (trailing zeros dropped), for notification texts.';

create function app.wallet_chain_head(chain integer) returns bigint
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return (
    select h.block_number from app_private.chain_heads h where h.chain_id = chain
  );
end;
$$;
comment on function app.wallet_chain_head(integer) is
  'The highest block the platform has seen on a chain, for counting confirmations. security definer: the heads are server state in app_private; it returns one public number.';

create function app.wallet_transaction_json(t app.wallet_transactions) returns jsonb
language plpgsql stable
set search_path = ''
as $$
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
comment on function app.wallet_transaction_json(app.wallet_transactions) is
  'A transaction as the API shows it (api-contract.md, Wallet): a pending transfer past its expiry already reads as expired, confirmations are counted against the newest block seen. Runs with the caller''s rights.';

/*
 * The live event and the notification of every status change (and of a new row), in the same
 * transaction as the change. A collapse key per transaction keeps one unread notification per
 * transfer, updated as it moves on. An incoming row removed by a reorganization is announced as
 * failed before it goes.
 */
create function app_private.wallet_transaction_events() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
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
comment on function app_private.wallet_transaction_events() is
  'wallet.transaction.updated on user:<owner> and a WALLET notification (one per transaction, collapsed, updated at each change) for every new transaction row and every status change; an incoming row deleted by a reorganization is announced as failed (not one deleted with its wallet, as in an account deletion). security definer: it writes the event log and the inbox.';

create function app_private.touch_wallet_transaction() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end;
$$;
comment on function app_private.touch_wallet_transaction() is 'Keeps updated_at on the server''s clock.';

/* Locally, the stack funds every new wallet on its chain; hosted, nobody listens. */
create function app_private.announce_wallet() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform pg_notify('agora_wallets', new.address);
  return null;
end;
$$;
comment on function app_private.announce_wallet() is
  'NOTIFY agora_wallets with a new wallet''s address at commit: the local stack funds new wallets on its development chain (stack/chain/local.ts); nothing listens hosted.';

create trigger wallet_transactions_touch before update on app.wallet_transactions
  for each row execute function app_private.touch_wallet_transaction();
create trigger wallet_transactions_events_insert after insert on app.wallet_transactions
  for each row execute function app_private.wallet_transaction_events();
create trigger wallet_transactions_events_update after update of status on app.wallet_transactions
  for each row when (old.status is distinct from new.status)
  execute function app_private.wallet_transaction_events();
create trigger wallet_transactions_events_delete after delete on app.wallet_transactions
  for each row when (old.direction = 'in')
  execute function app_private.wallet_transaction_events();
create trigger wallets_announce after insert on app.wallets
  for each row execute function app_private.announce_wallet();

-- ---------------------------------------------------------------------------------------------
-- Row level security
-- ---------------------------------------------------------------------------------------------

alter table app.wallets enable row level security;
alter table app_private.wallet_keys enable row level security;
alter table app_private.wallet_nonces enable row level security;
alter table app.chain_tokens enable row level security;
alter table app.wallet_tokens enable row level security;
alter table app.wallet_transactions enable row level security;
alter table app_private.wallet_signed_transactions enable row level security;
alter table app_private.chain_cursors enable row level security;
alter table app_private.chain_blocks enable row level security;
alter table app_private.chain_heads enable row level security;
alter table app_private.nft_transfers enable row level security;
alter table app_private.nft_tokens enable row level security;
alter table app_private.nft_collections enable row level security;
alter table app.wallet_nfts enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Helper functions (server paths only: none is granted to an API role)
-- ---------------------------------------------------------------------------------------------

/*
 * A new wallet with its sealed key and its nonce counter, and the user's wallet_address, in one
 * transaction. The id comes from the caller because it is sealed into the key's ciphertext.
 */
create function app_private.insert_wallet(
  new_wallet_id uuid,
  new_owner uuid,
  new_address text,
  master_key_id text,
  sealed_data_key bytea,
  sealed_private_key bytea
) returns app.wallets
language plpgsql volatile
set search_path = ''
as $$
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
comment on function app_private.insert_wallet(uuid, uuid, text, text, bytea, bytea) is
  'Stores a new wallet, its sealed key and its nonce counter, and sets the user''s wallet_address; AG409 when the user already has one (a concurrent first sign-in loses cleanly). Server path only.';

/*
 * The next nonce of a wallet. The row stays locked until the caller's transaction ends: a second
 * confirm of the same wallet waits here, and gets the next number only if this one committed.
 */
create function app_private.allocate_wallet_nonce(wallet uuid) returns bigint
language sql volatile
set search_path = ''
as $$
  update app_private.wallet_nonces n set next_nonce = n.next_nonce + 1, updated_at = now()
  where n.wallet_id = wallet
  returning n.next_nonce - 1
$$;
comment on function app_private.allocate_wallet_nonce(uuid) is
  'Takes the wallet''s next nonce and moves the counter on, holding the row lock until commit: distinct, gapless nonces for concurrent confirms (a rolled-back confirm gives its number back). Server path only.';

/*
 * When the chain says a nonce is already used by a transaction the platform did not send (the key
 * was exported and used elsewhere), later transfers start after it.
 */
create function app_private.sync_wallet_nonce(wallet uuid, chain_nonce bigint) returns bigint
language sql volatile
set search_path = ''
as $$
  update app_private.wallet_nonces n
  set next_nonce = greatest(n.next_nonce, chain_nonce), updated_at = now()
  where n.wallet_id = wallet
  returning n.next_nonce
$$;
comment on function app_private.sync_wallet_nonce(uuid, bigint) is
  'Moves a wallet''s nonce counter up to the chain''s count (never down), after the node said a nonce was taken outside the platform. Server path only.';

/*
 * A new pending transfer, if the funds allow it. The wallet row is locked first, so two transfers
 * of one wallet are checked one after the other against each other's reservations. The balances
 * come from the chain (read by the server just before); what is still in flight (pending and not
 * expired, or submitted) is reserved: its amount in its token, and its gas in native currency.
 */
create function app_private.create_wallet_transfer(
  owner uuid,
  chain integer,
  kind app.wallet_token_kind,
  token text,
  symbol text,
  token_full_name text,
  decimals integer,
  recipient text,
  recipient_user uuid,
  transfer_amount numeric,
  transfer_gas_limit numeric,
  transfer_max_fee numeric,
  token_balance numeric,
  native_balance numeric
) returns app.wallet_transactions
language plpgsql volatile
set search_path = ''
set plan_cache_mode = force_generic_plan -- docs/conventions.md, "Plans"
as $$
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
comment on function app_private.create_wallet_transfer(uuid, integer, app.wallet_token_kind, text, text, text, integer, text, uuid, numeric, numeric, numeric, numeric, numeric) is
  'Creates a pending transfer that expires after wallet.pendingTtlSeconds, when the chain balances the server read cover it after what is still in flight (amounts in their token, gas in native currency); else AG422 insufficient_funds with the figures. The wallet row lock serializes transfers of one wallet. Server path only: the balances are the server''s reading of the chain.';

/*
 * The submit step of a confirm: the signed bytes and hash stored, the status moved on and the
 * broadcast queued, all in the transaction that allocated the nonce.
 */
create function app_private.submit_wallet_transaction(
  target_id uuid,
  signed_nonce bigint,
  signed_hash text,
  raw text,
  signed_max_fee numeric,
  signed_priority_fee numeric
) returns app.wallet_transactions
language plpgsql volatile
set search_path = ''
set plan_cache_mode = force_generic_plan -- docs/conventions.md, "Plans"
as $$
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
comment on function app_private.submit_wallet_transaction(uuid, bigint, text, text, numeric, numeric) is
  'Records a signed transfer (nonce, hash, the raw bytes) as submitted and queues its wallet.broadcast job, in the confirm''s transaction: the bytes are stored before anything is sent. Server path only.';

/* The outcome of a submitted transfer, from its receipt (or the node's refusal). */
create function app_private.finish_wallet_transaction(
  target_id uuid,
  outcome app.wallet_transaction_status,
  mined_block bigint,
  mined_block_hash text,
  paid_fee numeric,
  failure text
) returns boolean
language plpgsql volatile
set search_path = ''
set plan_cache_mode = force_generic_plan -- docs/conventions.md, "Plans"
as $$
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
comment on function app_private.finish_wallet_transaction(uuid, app.wallet_transaction_status, bigint, text, numeric, text) is
  'Moves a submitted transfer to confirmed or failed with its block, fee and error; false when it had already moved on (a watcher ran twice). Server path only.';

/* Pending transfers past their expiry become expired (pg_cron, every minute; a confirm does it for its own). */
create function app_private.expire_wallet_transfers() returns integer
language sql volatile
set search_path = ''
as $$
  with expired as (
    update app.wallet_transactions t set status = 'expired'
    where t.status = 'pending' and t.expires_at <= now()
    returning 1
  )
  select count(*)::integer from expired
$$;
comment on function app_private.expire_wallet_transfers() is
  'pg_cron (agora-expire-wallet-transfers): pending transfers past their expiry become expired, with their event and notification; returns how many.';

create function app_private.note_chain_head(chain integer, head bigint) returns void
language sql volatile
set search_path = ''
as $$
  insert into app_private.chain_heads as h (chain_id, block_number) values (chain, head)
  on conflict (chain_id) do update set block_number = greatest(h.block_number, excluded.block_number),
    updated_at = now()
$$;
comment on function app_private.note_chain_head(integer, bigint) is
  'Records the newest block seen on a chain (never moves back), for confirmation counts.';

/*
 * Recomputes what the platform's wallets hold of the given NFTs from the indexed transfer logs:
 * rows whose balance is positive are written (metadata copied from the caches), the others go.
 */
create function app_private.refresh_wallet_nfts(
  chain integer,
  holders text[],
  contracts text[],
  token_ids numeric[]
) returns void
language sql volatile
set search_path = ''
as $$
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
comment on function app_private.refresh_wallet_nfts(integer, text[], text[], numeric[]) is
  'Recomputes the holdings of the given (holder, contract, token id) triples from app_private.nft_transfers: positive balances are upserted into app.wallet_nfts with their metadata, the rest deleted. The follower calls it after indexing or rolling back blocks. Server path only.';

/*
 * Undoes what the follower recorded above block `fork` (a reorganization replaced those blocks):
 * incoming transfers and NFT logs go (holdings recomputed), outgoing transfers mined there are
 * submitted again and watched (their signed bytes are sent again if the node lost them), the
 * stored block hashes above the fork go and the cursor moves back to the fork.
 */
create function app_private.rollback_chain_index(chain integer, fork bigint, fork_hash text) returns integer
language plpgsql volatile
set search_path = ''
as $$
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
comment on function app_private.rollback_chain_index(integer, bigint, text) is
  'Rolls the follower back to block `fork` after a reorganization: incoming transfers and NFT logs above it are deleted (holdings recomputed), outgoing transfers mined above it return to submitted with a wallet.watch job, block hashes above it are dropped and the cursor moves to the fork. Returns the transactions touched. Server path only.';

-- ---------------------------------------------------------------------------------------------
-- Policies (owners read their own; nobody writes through the API roles)
-- ---------------------------------------------------------------------------------------------

create policy wallets_select_own on app.wallets for select to authenticated
  using (user_id = (select auth.uid()));
create policy chain_tokens_select_subscriber on app.chain_tokens for select to authenticated
  using ((select app.has_role('SUBSCRIBER')));
create policy wallet_tokens_select_own on app.wallet_tokens for select to authenticated
  using (user_id = (select auth.uid()));
create policy wallet_transactions_select_own on app.wallet_transactions for select to authenticated
  using (user_id = (select auth.uid()));
create policy wallet_nfts_select_own on app.wallet_nfts for select to authenticated
  using (user_id = (select auth.uid()));

-- ---------------------------------------------------------------------------------------------
-- Grants
-- ---------------------------------------------------------------------------------------------

grant usage on type app.wallet_token_kind, app.wallet_transaction_status,
  app.wallet_transaction_direction, app.nft_standard to authenticated;
grant select on app.wallets, app.chain_tokens, app.wallet_tokens, app.wallet_transactions,
  app.wallet_nfts to authenticated;
revoke all on app_private.wallet_keys, app_private.wallet_nonces,
  app_private.wallet_signed_transactions, app_private.chain_cursors, app_private.chain_blocks,
  app_private.chain_heads, app_private.nft_transfers, app_private.nft_tokens,
  app_private.nft_collections
  from public, anon, authenticated, service_role;

grant execute on function app.wallet_chain_head(integer) to authenticated;
grant execute on function app.wallet_transaction_json(app.wallet_transactions) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

/* Who a transfer to `{ userId }` goes to: an active user's wallet address, or nothing. */
create function app.wallet_address_of(target uuid) returns text
language plpgsql stable security definer
set search_path = ''
as $$
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
comment on function app.wallet_address_of(uuid) is
  'The wallet address of an active user, for a transfer addressed by user id; null when the user is unknown, suspended or has no wallet. security definer: wallets are readable only by their owners; it returns one address (public on the chain anyway) to SUBSCRIBER and above.';
grant execute on function app.wallet_address_of(uuid) to authenticated;

create function app.admin_wallet_stats(bucket text, range_from timestamptz, range_to timestamptz)
returns jsonb
language plpgsql stable security definer
set search_path = ''
as $$
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
comment on function app.admin_wallet_stats(text, timestamptz, timestamptz) is
  'Wallet figures for the admin analytics: totals, transactions by status and direction, wallets created per interval and the confirmed outgoing volume per token per interval (base units as decimal strings), zero-filled. security definer because wallets and transactions are readable only by their owners; it checks the caller is an ADMIN and returns aggregates only, never an address.';
grant execute on function app.admin_wallet_stats(text, timestamptz, timestamptz) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- The account export's part (app_private.account_export_parts, signin migration)
-- ---------------------------------------------------------------------------------------------

create function app_private.account_export_wallet(target_user_id uuid) returns jsonb
language sql stable
set search_path = ''
as $$
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
comment on function app_private.account_export_wallet(uuid) is
  'Export part `wallet`: the wallet''s public data (address, when it was created and last exported), the ERC-20s added, every transaction (its token as `asset`, its hash as `txid`: the export''s keys never look like secrets) and the NFTs held; null without a wallet. Never key material: the sealed key stays in app_private.wallet_keys (the key itself leaves only through POST /api/wallet/export).';

insert into app_private.account_export_parts (part, function_name, description) values
  ('wallet', 'app_private.account_export_wallet(uuid)', 'The wallet: address, custom tokens, transactions and NFTs, never key material (wallet).');

-- ---------------------------------------------------------------------------------------------
-- Schedules
-- ---------------------------------------------------------------------------------------------

select cron.schedule('agora-expire-wallet-transfers', '* * * * *', 'select app_private.expire_wallet_transfers()');
-- Hosted, nothing lives between requests: once a minute the follower runs as a job, unless a
-- follower ran within the minute (the local stack follows blocks itself, every second). The key
-- is per minute, so one job per minute at most.
select cron.schedule('agora-follow-chain', '* * * * *', $$
  select app_private.enqueue_job('wallet.index', '{}', now(),
    'wallet.index:' || to_char(date_trunc('minute', now()), 'YYYY-MM-DD"T"HH24:MI'), 3)
  where not exists (
    select 1 from app_private.chain_heads h where h.updated_at > now() - interval '1 minute'
  )
$$);

revoke execute on all functions in schema app, app_private from public;
