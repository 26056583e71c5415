-- Agora's schema as it is now, domain wallet: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261124130000_wallet.sql
--   supabase/migrations/20261128130000_wallet_lock_order.sql
--   supabase/migrations/20261128140000_wallet_resign_outside_nonce.sql
--   supabase/migrations/20261129140000_wallet_cancel_transfer.sql
--   supabase/migrations/20261130090000_wallet_counterparty_fee.sql
--   supabase/migrations/20261206000320_wallet_export_rows.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- type app.nft_standard
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.nft_standard AS ENUM (
    'ERC721',
    'ERC1155'
);

COMMENT ON TYPE app.nft_standard IS 'The token standards of the NFT collections the platform indexes.';

GRANT ALL ON TYPE app.nft_standard TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.wallet_token_kind
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.wallet_token_kind AS ENUM (
    'native',
    'utility',
    'governance',
    'staking',
    'custom'
);

COMMENT ON TYPE app.wallet_token_kind IS 'The five kinds of token a wallet holds: the chain''s native currency, the platform''s utility, governance and staking-rewards ERC-20s, and ERC-20s a user adds.';

GRANT ALL ON TYPE app.wallet_token_kind TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.wallet_transaction_direction
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.wallet_transaction_direction AS ENUM (
    'out',
    'in'
);

COMMENT ON TYPE app.wallet_transaction_direction IS 'out: sent from the wallet through the platform; in: a transfer to the wallet seen on the chain.';

GRANT ALL ON TYPE app.wallet_transaction_direction TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.wallet_transaction_status
-- created in 20261124130000_wallet.sql; last changed in 20261129140000_wallet_cancel_transfer.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.wallet_transaction_status AS ENUM (
    'pending',
    'submitted',
    'confirmed',
    'failed',
    'expired',
    'cancelled'
);

COMMENT ON TYPE app.wallet_transaction_status IS 'pending: validated, waiting for the owner''s confirm until it expires; submitted: signed with its nonce and sent (or being sent); confirmed: mined with enough confirmations; failed: reverted, or refused by the node; expired: never confirmed in time; cancelled: withdrawn by its owner before confirming (nothing was signed or sent). Incoming transfers are submitted until they have enough confirmations.';

GRANT ALL ON TYPE app.wallet_transaction_status TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.chain_tokens
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON TABLE app.chain_tokens IS 'ERC-20 tokens as the chain describes them (symbol, name, decimals), read and checked once by the server: the platform''s tokens and every token a user added. Public chain data, readable from SUBSCRIBER up.';

ALTER TABLE ONLY app.chain_tokens
    ADD CONSTRAINT chain_tokens_pkey PRIMARY KEY (chain_id, address);

ALTER TABLE app.chain_tokens ENABLE ROW LEVEL SECURITY;

CREATE POLICY chain_tokens_select_subscriber ON app.chain_tokens FOR SELECT TO authenticated USING (( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role));

GRANT SELECT ON TABLE app.chain_tokens TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.wallet_nfts
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON TABLE app.wallet_nfts IS 'What each wallet holds of the configured NFT collections, computed from their transfer logs (app_private.nft_transfers) by the follower, with the token''s metadata. Owners read their own.';

ALTER TABLE ONLY app.wallet_nfts
    ADD CONSTRAINT wallet_nfts_pkey PRIMARY KEY (wallet_id, chain_id, contract, token_id);

CREATE INDEX wallet_nfts_user_order_idx ON app.wallet_nfts USING btree (user_id, created_at DESC, contract DESC, token_id DESC);

ALTER TABLE ONLY app.wallet_nfts
    ADD CONSTRAINT wallet_nfts_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.wallet_nfts
    ADD CONSTRAINT wallet_nfts_wallet_id_fkey FOREIGN KEY (wallet_id) REFERENCES app.wallets(id) ON DELETE CASCADE;

ALTER TABLE app.wallet_nfts ENABLE ROW LEVEL SECURITY;

CREATE POLICY wallet_nfts_select_own ON app.wallet_nfts FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

GRANT SELECT ON TABLE app.wallet_nfts TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.wallet_tokens
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.wallet_tokens (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    chain_id integer NOT NULL,
    address text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

COMMENT ON TABLE app.wallet_tokens IS 'The custom ERC-20s each user follows (besides native currency and the platform''s tokens, which everyone has); added only after the server checked the contract on the chain.';

ALTER TABLE ONLY app.wallet_tokens
    ADD CONSTRAINT wallet_tokens_pkey PRIMARY KEY (id);

ALTER TABLE ONLY app.wallet_tokens
    ADD CONSTRAINT wallet_tokens_user_id_chain_id_address_key UNIQUE (user_id, chain_id, address);

CREATE INDEX wallet_tokens_chain_address_idx ON app.wallet_tokens USING btree (chain_id, address);

ALTER TABLE ONLY app.wallet_tokens
    ADD CONSTRAINT wallet_tokens_chain_id_address_fkey FOREIGN KEY (chain_id, address) REFERENCES app.chain_tokens(chain_id, address) ON DELETE CASCADE;

ALTER TABLE ONLY app.wallet_tokens
    ADD CONSTRAINT wallet_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.wallet_tokens ENABLE ROW LEVEL SECURITY;

CREATE POLICY wallet_tokens_select_own ON app.wallet_tokens FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

GRANT SELECT ON TABLE app.wallet_tokens TO authenticated;

--
-- PostgreSQL database dump complete
--

-- ---------------------------------------------------------------------------------------------
-- table app.wallet_transactions
-- created in 20261124130000_wallet.sql; last changed in 20261129140000_wallet_cancel_transfer.sql
-- ---------------------------------------------------------------------------------------------

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
    CONSTRAINT wallet_transactions_signed CHECK ((((status)::text = ANY (ARRAY['pending'::text, 'expired'::text, 'cancelled'::text])) OR (direction = 'in'::app.wallet_transaction_direction) OR ((hash IS NOT NULL) AND (nonce IS NOT NULL)))),
    CONSTRAINT wallet_transactions_to_address_check CHECK ((to_address ~ '^0x[0-9a-fA-F]{40}$'::text)),
    CONSTRAINT wallet_transactions_token_address_check CHECK ((token_address ~ '^0x[0-9a-fA-F]{40}$'::text)),
    CONSTRAINT wallet_transactions_token_decimals_check CHECK (((token_decimals >= 0) AND (token_decimals <= 77)))
);

COMMENT ON TABLE app.wallet_transactions IS 'A wallet''s history: transfers out (created pending by the owner, signed and sent on confirm, watched until mined) and transfers in (ERC-20 Transfer logs of known tokens and native value sent to the wallet, indexed from the chain). The token is kept as it was (kind, symbol, name, decimals). Written only by server paths; owners read their own.';

COMMENT ON COLUMN app.wallet_transactions.log_index IS 'Incoming only: the ERC-20 Transfer log''s index in its block, or -1 for native value (one per transaction).';

COMMENT ON COLUMN app.wallet_transactions.gas_limit IS 'Outgoing only: estimated when the transfer is created; with max_fee_per_gas it is the gas reserved from the native balance until the transfer ends.';

ALTER TABLE ONLY app.wallet_transactions
    ADD CONSTRAINT wallet_transactions_pkey PRIMARY KEY (id);

CREATE INDEX wallet_transactions_block_idx ON app.wallet_transactions USING btree (chain_id, block_number) WHERE (block_number IS NOT NULL);

CREATE INDEX wallet_transactions_created_at_brin ON app.wallet_transactions USING brin (created_at);

CREATE INDEX wallet_transactions_in_flight_idx ON app.wallet_transactions USING btree (wallet_id) WHERE (status = ANY (ARRAY['pending'::app.wallet_transaction_status, 'submitted'::app.wallet_transaction_status]));

CREATE UNIQUE INDEX wallet_transactions_incoming_key ON app.wallet_transactions USING btree (wallet_id, hash, log_index) WHERE (direction = 'in'::app.wallet_transaction_direction);

CREATE UNIQUE INDEX wallet_transactions_nonce_key ON app.wallet_transactions USING btree (wallet_id, nonce) WHERE (nonce IS NOT NULL);

CREATE INDEX wallet_transactions_pending_expiry_idx ON app.wallet_transactions USING btree (expires_at) WHERE (status = 'pending'::app.wallet_transaction_status);

CREATE INDEX wallet_transactions_to_user_id_idx ON app.wallet_transactions USING btree (to_user_id) WHERE (to_user_id IS NOT NULL);

CREATE INDEX wallet_transactions_user_order_idx ON app.wallet_transactions USING btree (user_id, created_at DESC, id DESC);

CREATE INDEX wallet_transactions_wallet_id_idx ON app.wallet_transactions USING btree (wallet_id);

CREATE TRIGGER wallet_transactions_events_delete AFTER DELETE ON app.wallet_transactions FOR EACH ROW WHEN ((old.direction = 'in'::app.wallet_transaction_direction)) EXECUTE FUNCTION app_private.wallet_transaction_events();

CREATE TRIGGER wallet_transactions_events_insert AFTER INSERT ON app.wallet_transactions FOR EACH ROW EXECUTE FUNCTION app_private.wallet_transaction_events();

CREATE TRIGGER wallet_transactions_events_update AFTER UPDATE OF status ON app.wallet_transactions FOR EACH ROW WHEN ((old.status IS DISTINCT FROM new.status)) EXECUTE FUNCTION app_private.wallet_transaction_events();

CREATE TRIGGER wallet_transactions_facts_deleted AFTER DELETE ON app.wallet_transactions REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.wallet_transactions_facts_changed();

CREATE TRIGGER wallet_transactions_facts_inserted AFTER INSERT ON app.wallet_transactions REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.wallet_transactions_facts_changed();

CREATE TRIGGER wallet_transactions_facts_truncated AFTER TRUNCATE ON app.wallet_transactions FOR EACH STATEMENT EXECUTE FUNCTION app_private.analytics_facts_truncated();

CREATE TRIGGER wallet_transactions_facts_updated AFTER UPDATE ON app.wallet_transactions FOR EACH ROW WHEN ((((((((((old.status IS DISTINCT FROM new.status) OR (old.direction IS DISTINCT FROM new.direction)) OR (old.confirmed_at IS DISTINCT FROM new.confirmed_at)) OR (old.amount IS DISTINCT FROM new.amount)) OR (old.chain_id IS DISTINCT FROM new.chain_id)) OR (old.token_kind IS DISTINCT FROM new.token_kind)) OR (old.token_address IS DISTINCT FROM new.token_address)) OR (old.token_symbol IS DISTINCT FROM new.token_symbol)) OR (old.token_decimals IS DISTINCT FROM new.token_decimals))) EXECUTE FUNCTION app_private.wallet_transactions_facts_changed();

CREATE TRIGGER wallet_transactions_touch BEFORE UPDATE ON app.wallet_transactions FOR EACH ROW EXECUTE FUNCTION app_private.touch_wallet_transaction();

ALTER TABLE ONLY app.wallet_transactions
    ADD CONSTRAINT wallet_transactions_to_user_id_fkey FOREIGN KEY (to_user_id) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY app.wallet_transactions
    ADD CONSTRAINT wallet_transactions_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.wallet_transactions
    ADD CONSTRAINT wallet_transactions_wallet_id_fkey FOREIGN KEY (wallet_id) REFERENCES app.wallets(id) ON DELETE CASCADE;

ALTER TABLE app.wallet_transactions ENABLE ROW LEVEL SECURITY;

CREATE POLICY wallet_transactions_select_own ON app.wallet_transactions FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

GRANT SELECT ON TABLE app.wallet_transactions TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.wallets
-- created in 20261124130000_wallet.sql; last changed in 20261130090000_wallet_counterparty_fee.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.wallets (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    address text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    exported_at timestamp with time zone,
    CONSTRAINT wallets_address_check CHECK ((address ~ '^0x[0-9a-fA-F]{40}$'::text))
);

COMMENT ON TABLE app.wallets IS 'One custodial wallet per user: its address (EIP-55 checksummed) and when its key was last exported. The key itself is in app_private.wallet_keys, encrypted.';

ALTER TABLE ONLY app.wallets
    ADD CONSTRAINT wallets_address_key UNIQUE (address);

ALTER TABLE ONLY app.wallets
    ADD CONSTRAINT wallets_pkey PRIMARY KEY (id);

ALTER TABLE ONLY app.wallets
    ADD CONSTRAINT wallets_user_id_key UNIQUE (user_id);

CREATE UNIQUE INDEX wallets_address_lower_idx ON app.wallets USING btree (lower(address));

CREATE INDEX wallets_created_at_idx ON app.wallets USING btree (created_at);

CREATE TRIGGER wallets_announce AFTER INSERT ON app.wallets FOR EACH ROW EXECUTE FUNCTION app_private.announce_wallet();

CREATE TRIGGER wallets_facts_deleted AFTER DELETE ON app.wallets REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.wallets_facts_changed();

CREATE TRIGGER wallets_facts_inserted AFTER INSERT ON app.wallets REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.wallets_facts_changed();

CREATE TRIGGER wallets_facts_truncated AFTER TRUNCATE ON app.wallets FOR EACH STATEMENT EXECUTE FUNCTION app_private.analytics_facts_truncated();

CREATE TRIGGER wallets_facts_updated AFTER UPDATE ON app.wallets FOR EACH ROW WHEN (((old.created_at IS DISTINCT FROM new.created_at) OR (old.exported_at IS DISTINCT FROM new.exported_at))) EXECUTE FUNCTION app_private.wallets_facts_changed();

ALTER TABLE ONLY app.wallets
    ADD CONSTRAINT wallets_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.wallets ENABLE ROW LEVEL SECURITY;

CREATE POLICY wallets_select_own ON app.wallets FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

GRANT SELECT ON TABLE app.wallets TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app_private.chain_blocks
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON TABLE app_private.chain_blocks IS 'The hashes of the last blocks the follower indexed (the last 128), to find where the chain forked when a reorganization replaced them.';

ALTER TABLE ONLY app_private.chain_blocks
    ADD CONSTRAINT chain_blocks_pkey PRIMARY KEY (chain_id, number);

ALTER TABLE app_private.chain_blocks ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.chain_cursors
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.chain_cursors (
    chain_id integer NOT NULL,
    block_number bigint NOT NULL,
    block_hash text,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chain_cursors_block_number_check CHECK ((block_number >= '-1'::integer))
);

COMMENT ON TABLE app_private.chain_cursors IS 'Where the chain follower stands: the last block it indexed and that block''s hash. Moved with a compare-and-set, so two followers never index the same blocks; a restart resumes here.';

ALTER TABLE ONLY app_private.chain_cursors
    ADD CONSTRAINT chain_cursors_pkey PRIMARY KEY (chain_id);

ALTER TABLE app_private.chain_cursors ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.chain_heads
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.chain_heads (
    chain_id integer NOT NULL,
    block_number bigint NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chain_heads_block_number_check CHECK ((block_number >= 0))
);

COMMENT ON TABLE app_private.chain_heads IS 'The highest block seen by the follower or a transaction watcher: what confirmations are counted against.';

ALTER TABLE ONLY app_private.chain_heads
    ADD CONSTRAINT chain_heads_pkey PRIMARY KEY (chain_id);

ALTER TABLE app_private.chain_heads ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.nft_collections
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.nft_collections (
    chain_id integer NOT NULL,
    contract text NOT NULL,
    standard app.nft_standard NOT NULL,
    name text,
    symbol text
);

COMMENT ON TABLE app_private.nft_collections IS 'Name and symbol of each indexed NFT collection, read once from the chain.';

ALTER TABLE ONLY app_private.nft_collections
    ADD CONSTRAINT nft_collections_pkey PRIMARY KEY (chain_id, contract);

ALTER TABLE app_private.nft_collections ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.nft_tokens
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.nft_tokens (
    chain_id integer NOT NULL,
    contract text NOT NULL,
    token_id numeric(78,0) NOT NULL,
    token_uri text,
    name text,
    image text,
    fetched_at timestamp with time zone DEFAULT now() NOT NULL
);

COMMENT ON TABLE app_private.nft_tokens IS 'Token URI metadata per NFT, read once from the chain (data: URIs decoded; other URIs kept for clients to fetch).';

ALTER TABLE ONLY app_private.nft_tokens
    ADD CONSTRAINT nft_tokens_pkey PRIMARY KEY (chain_id, contract, token_id);

ALTER TABLE app_private.nft_tokens ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.nft_transfers
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON TABLE app_private.nft_transfers IS 'ERC-721 Transfer and ERC-1155 TransferSingle/TransferBatch logs of the configured collections that involve a platform wallet: the source holdings are computed from, and what a reorganization rolls back.';

ALTER TABLE ONLY app_private.nft_transfers
    ADD CONSTRAINT nft_transfers_pkey PRIMARY KEY (chain_id, transaction_hash, log_index, batch_index);

CREATE INDEX nft_transfers_block_idx ON app_private.nft_transfers USING btree (chain_id, block_number);

CREATE INDEX nft_transfers_from_idx ON app_private.nft_transfers USING btree (chain_id, from_address, contract, token_id);

CREATE INDEX nft_transfers_to_idx ON app_private.nft_transfers USING btree (chain_id, to_address, contract, token_id);

ALTER TABLE app_private.nft_transfers ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.wallet_keys
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON TABLE app_private.wallet_keys IS 'Wallet private keys, only as ciphertext: each sealed with AES-256-GCM under a per-wallet data key (12-byte IV, 32-byte key, 16-byte tag), the data key sealed under the master key named by key_id; wallet id and address are the additional authenticated data of both. No API role can read it.';

COMMENT ON COLUMN app_private.wallet_keys.key_id IS 'The master key that wraps this data key: the first 16 hex digits of its SHA-256, so the rotation command knows what still needs re-wrapping.';

ALTER TABLE ONLY app_private.wallet_keys
    ADD CONSTRAINT wallet_keys_pkey PRIMARY KEY (wallet_id);

ALTER TABLE ONLY app_private.wallet_keys
    ADD CONSTRAINT wallet_keys_wallet_id_fkey FOREIGN KEY (wallet_id) REFERENCES app.wallets(id) ON DELETE CASCADE;

ALTER TABLE app_private.wallet_keys ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.wallet_nonces
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.wallet_nonces (
    wallet_id uuid NOT NULL,
    next_nonce bigint DEFAULT 0 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT wallet_nonces_next_nonce_check CHECK ((next_nonce >= 0))
);

COMMENT ON TABLE app_private.wallet_nonces IS 'The next transaction nonce of each wallet. app_private.allocate_wallet_nonce takes it and moves it on in the confirming transaction: concurrent confirms of one wallet wait on this row, and a confirm that rolls back gives its nonce back, so nonces are distinct and gapless.';

ALTER TABLE ONLY app_private.wallet_nonces
    ADD CONSTRAINT wallet_nonces_pkey PRIMARY KEY (wallet_id);

ALTER TABLE ONLY app_private.wallet_nonces
    ADD CONSTRAINT wallet_nonces_wallet_id_fkey FOREIGN KEY (wallet_id) REFERENCES app.wallets(id) ON DELETE CASCADE;

ALTER TABLE app_private.wallet_nonces ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.wallet_signed_transactions
-- created in 20261124130000_wallet.sql; last changed in 20261128140000_wallet_resign_outside_nonce.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.wallet_signed_transactions (
    transaction_id uuid NOT NULL,
    raw text NOT NULL,
    broadcasts integer DEFAULT 0 NOT NULL,
    last_broadcast_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    replaced_hashes text[] DEFAULT '{}'::text[] NOT NULL,
    CONSTRAINT wallet_signed_transactions_broadcasts_check CHECK ((broadcasts >= 0)),
    CONSTRAINT wallet_signed_transactions_raw_check CHECK ((raw ~ '^0x[0-9a-f]+$'::text))
);

COMMENT ON TABLE app_private.wallet_signed_transactions IS 'The signed raw transaction of every submitted transfer, stored with its hash in the confirming transaction before anything is broadcast: a retry after an outage sends the same bytes, so a transfer can never go out twice.';

COMMENT ON COLUMN app_private.wallet_signed_transactions.replaced_hashes IS 'Hashes of earlier signatures of this transfer, replaced because a transaction sent outside the platform used their nonce before any node accepted them; oldest first. They can never be mined (their nonce is used on the chain) and are never sent again; kept so an operator can tell them from the transfer''s hash.';

ALTER TABLE ONLY app_private.wallet_signed_transactions
    ADD CONSTRAINT wallet_signed_transactions_pkey PRIMARY KEY (transaction_id);

ALTER TABLE ONLY app_private.wallet_signed_transactions
    ADD CONSTRAINT wallet_signed_transactions_transaction_id_fkey FOREIGN KEY (transaction_id) REFERENCES app.wallet_transactions(id) ON DELETE CASCADE;

ALTER TABLE app_private.wallet_signed_transactions ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- function app.admin_wallet_stats
-- created in 20261124130000_wallet.sql; last changed in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.admin_wallet_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET "TimeZone" TO 'UTC'
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
  transactions as (
    select split_part(x.key, ' ', 1) as status, split_part(x.key, ' ', 2) as direction, x.value
    from app_private.fact_totals('wallet_transactions.all') x
  ),
  volume as (
    select v.t, v.key, v.value as amount, coalesce(n.value, 0) as n
    from app_private.fact_series('wallet_transactions.volume', bucket, range_from, range_to) v
    left join app_private.fact_series('wallet_transactions.transfers', bucket, range_from, range_to) n
      on n.t = v.t and n.key = v.key
  ),
  tokens as (
    select distinct v.key, v.key::jsonb as token from volume v where v.n <> 0
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'wallets', app_private.fact_total('wallets.all'),
      'exported', app_private.fact_total('wallets.exported'),
      'transactions', (select coalesce(sum(x.value), 0)::bigint from transactions x)
    ),
    'transactionsByStatus', (
      select jsonb_object_agg(s.status, coalesce(
        (select sum(x.value) from transactions x where x.status = s.status::text), 0)::bigint)
      from unnest(enum_range(null::app.wallet_transaction_status)) as s (status)
    ),
    'transactionsByDirection', jsonb_build_object(
      'out', (select coalesce(sum(x.value), 0)::bigint from transactions x where x.direction = 'out'),
      'in', (select coalesce(sum(x.value), 0)::bigint from transactions x where x.direction = 'in')
    ),
    'walletsCreated', app_private.fact_series_json('wallets.created', bucket, range_from, range_to),
    'volume', coalesce((
      select jsonb_agg(jsonb_build_object(
        'token', k.token,
        'series', (select jsonb_agg(jsonb_build_object(
                            't', b.t, 'amount', coalesce(v.amount, 0)::text, 'transfers', coalesce(v.n, 0))
                          order by b.t)
                   from buckets b left join volume v on v.t = b.t and v.key = k.key)
      ) order by k.token ->> 'kind', k.token ->> 'symbol', k.key)
      from tokens k
    ), '[]'::jsonb)
  ) into result;
  return result;
end;
$$;

COMMENT ON FUNCTION app.admin_wallet_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) IS 'Wallet figures for the admin analytics: totals, transactions by status and direction, wallets created per interval and the confirmed outgoing volume per token per interval (base units as decimal strings), zero-filled, whole buckets, from the rollups (app_private.analytics_facts and its deltas). security definer because wallets and transactions are readable only by their owners and the rollups are server-only; it checks the caller is an ADMIN (42501) and returns aggregates only, never an address.';

REVOKE ALL ON FUNCTION app.admin_wallet_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app.admin_wallet_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.cancel_wallet_transfer
-- created in 20261129140000_wallet_cancel_transfer.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.cancel_wallet_transfer(target_id uuid) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  t app.wallet_transactions;
begin
  -- Only the owner's own outgoing transfers exist here: another user's is "not found", not
  -- "forbidden", so an id tells nobody else anything.
  select * into t from app.wallet_transactions w
  where w.id = target_id and w.user_id = (select auth.uid()) and w.direction = 'out'
    and app.has_role('SUBSCRIBER')
  for update;
  if not found then
    raise exception 'no such transaction' using errcode = 'AG404';
  end if;
  if t.status::text = 'cancelled' then
    -- Cancelling again answers the transaction as it is (a retried request).
    return app.wallet_transaction_json(t);
  end if;
  if t.status = 'pending' and t.expires_at <= now() then
    raise exception 'this transfer expired before it was confirmed; nothing was sent'
      using errcode = 'AG422', hint = 'invalid_transition',
            detail = jsonb_build_object('status', 'expired')::text;
  end if;
  if t.status <> 'pending' then
    raise exception 'a transfer that is % cannot be cancelled: it was already confirmed and signed', t.status
      using errcode = 'AG422', hint = 'invalid_transition',
            detail = jsonb_build_object('status', t.status)::text;
  end if;
  update app.wallet_transactions w set status = 'cancelled'::text::app.wallet_transaction_status
  where w.id = t.id
  returning * into t;
  return app.wallet_transaction_json(t);
end;
$$;

COMMENT ON FUNCTION app.cancel_wallet_transfer(target_id uuid) IS 'The owner withdraws a pending transfer before confirming it: pending -> cancelled (its funds no longer reserved), with the row locked so that a concurrent confirm (which locks it too and signs only a pending transfer) and this cancel cannot both win. Another user''s transfer, an incoming one or an unknown id: AG404. Already cancelled: the transaction as it is. Expired (also a pending one past its expiry), submitted, confirmed or failed: AG422 invalid_transition. security definer: transactions have no update grant; only the caller''s own row is touched.';

REVOKE ALL ON FUNCTION app.cancel_wallet_transfer(target_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.cancel_wallet_transfer(target_id uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.wallet_address_of
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON FUNCTION app.wallet_address_of(target uuid) IS 'The wallet address of an active user, for a transfer addressed by user id; null when the user is unknown, suspended or has no wallet. security definer: wallets are readable only by their owners; it returns one address (public on the chain anyway) to SUBSCRIBER and above.';

REVOKE ALL ON FUNCTION app.wallet_address_of(target uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.wallet_address_of(target uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.wallet_chain_head
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON FUNCTION app.wallet_chain_head(chain integer) IS 'The highest block the platform has seen on a chain, for counting confirmations. security definer: the heads are server state in app_private; it returns one public number.';

REVOKE ALL ON FUNCTION app.wallet_chain_head(chain integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.wallet_chain_head(chain integer) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.wallet_counterparty
-- created in 20261130090000_wallet_counterparty_fee.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.wallet_counterparty(other_address text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  found jsonb;
begin
  if other_address = '0x0000000000000000000000000000000000000000' then
    return jsonb_build_object('type', 'mint');
  end if;
  select jsonb_build_object('type', 'user', 'userId', u.id, 'name', u.name)
    into found
    from app.wallets w
    join app.users u on u.id = w.user_id
   where lower(w.address) = lower(other_address)
     and u.status = 'active';
  return found;
end;
$$;

COMMENT ON FUNCTION app.wallet_counterparty(other_address text) IS 'Who is on the other side of a wallet transaction, as the wallet page names them: {type: "mint"} for the zero address (tokens created, not sent by anyone), {type: "user", userId, name} for a custodial wallet of an active user (their profile name, what the directory shows anyway; a suspended user is in no list, so their address stays an address), null for an address outside the platform. security definer: wallets are readable only by their owners, and this returns the name and id only, never another wallet''s row.';

REVOKE ALL ON FUNCTION app.wallet_counterparty(other_address text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.wallet_counterparty(other_address text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.wallet_transaction_json
-- created in 20261124130000_wallet.sql; last changed in 20261130090000_wallet_counterparty_fee.sql
-- ---------------------------------------------------------------------------------------------

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
      'counterparty', app.wallet_counterparty(
        case when t.direction = 'out' then t.to_address else t.from_address end),
      'amount', t.amount::text,
      'hash', t.hash,
      'nonce', t.nonce,
      'blockNumber', t.block_number,
      'confirmations', case when t.block_number is null then null
        else greatest(coalesce(app.wallet_chain_head(t.chain_id), t.block_number) - t.block_number + 1, 1) end,
      'maxFee', (t.gas_limit * t.max_fee_per_gas)::text,
      'fee', t.fee::text,
      'error', t.error,
      'createdAt', to_char(t.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
      'expiresAt', to_char(t.expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
      'confirmedAt', to_char(t.confirmed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
    )
  );
end;
$$;

COMMENT ON FUNCTION app.wallet_transaction_json(t app.wallet_transactions) IS 'A transaction as the API shows it (api-contract.md, Wallet): a pending transfer past its expiry already reads as expired, confirmations are counted against the newest block seen; counterparty names the other side (app.wallet_counterparty) and maxFee is the most its gas can cost (gas limit × max fee per gas, in native base units; null for an incoming transfer), what the confirm step shows before the fee is known. Runs with the caller''s rights.';

REVOKE ALL ON FUNCTION app.wallet_transaction_json(t app.wallet_transactions) FROM PUBLIC;
GRANT ALL ON FUNCTION app.wallet_transaction_json(t app.wallet_transactions) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_wallet
-- created in 20261124130000_wallet.sql; last changed in 20261206000320_wallet_export_rows.sql
-- ---------------------------------------------------------------------------------------------

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
    'nfts', coalesce((
      select jsonb_agg(jsonb_build_object('chainId', n.chain_id, 'contract', n.contract,
                                          'id', n.token_id::text, 'standard', n.standard,
                                          'balance', n.balance::text, 'name', n.name)
                       order by n.created_at, n.contract, n.token_id)
      from app.wallet_nfts n where n.user_id = target_user_id), '[]'::jsonb)
  )
  from app.wallets w where w.user_id = target_user_id
$$;

COMMENT ON FUNCTION app_private.account_export_wallet(target_user_id uuid) IS 'Export part `wallet`, without its `transactions` (the registry''s rows_key: app_private.account_export_wallet_transactions_rows, which the export adds or streams): the wallet''s public data (address, when it was created and last exported), the ERC-20s added and the NFTs held; null without a wallet. Never key material: the sealed key stays in app_private.wallet_keys (the key itself leaves only through POST /api/wallet/export).';

REVOKE ALL ON FUNCTION app_private.account_export_wallet(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_wallet_transactions_rows
-- created in 20261206000320_wallet_export_rows.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_wallet_transactions_rows(target_user_id uuid) RETURNS SETOF text
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
           'id', x.id, 'direction', x.direction, 'status', j ->> 'status',
           'asset', j -> 'token', 'from', x.from_address, 'to', x.to_address,
           'amount', x.amount::text, 'txid', x.hash, 'blockNumber', x.block_number,
           'fee', x.fee::text, 'error', x.error,
           'createdAt', app_private.iso_time(x.created_at),
           'confirmedAt', app_private.iso_time(x.confirmed_at))::text
  from app.wallet_transactions x, app.wallet_transaction_json(x) j
  where x.user_id = target_user_id
  order by x.created_at, x.id
$$;

COMMENT ON FUNCTION app_private.account_export_wallet_transactions_rows(target_user_id uuid) IS 'Export part `wallet`, its `transactions`, an element per row: every transaction of the person''s wallet, oldest first (its token as `asset`, its hash as `txid`: the export''s keys never look like secrets).';

REVOKE ALL ON FUNCTION app_private.account_export_wallet_transactions_rows(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.allocate_wallet_nonce
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.allocate_wallet_nonce(wallet uuid) RETURNS bigint
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update app_private.wallet_nonces n set next_nonce = n.next_nonce + 1, updated_at = now()
  where n.wallet_id = wallet
  returning n.next_nonce - 1
$$;

COMMENT ON FUNCTION app_private.allocate_wallet_nonce(wallet uuid) IS 'Takes the wallet''s next nonce and moves the counter on, holding the row lock until commit: distinct, gapless nonces for concurrent confirms (a rolled-back confirm gives its number back). Server path only.';

REVOKE ALL ON FUNCTION app_private.allocate_wallet_nonce(wallet uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.announce_wallet
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.announce_wallet() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  perform pg_notify('agora_wallets', new.address);
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.announce_wallet() IS 'NOTIFY agora_wallets with a new wallet''s address at commit: the local stack funds new wallets on its development chain (stack/chain/local.ts); nothing listens hosted.';

REVOKE ALL ON FUNCTION app_private.announce_wallet() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.create_wallet_transfer
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON FUNCTION app_private.create_wallet_transfer(owner uuid, chain integer, kind app.wallet_token_kind, token text, symbol text, token_full_name text, decimals integer, recipient text, recipient_user uuid, transfer_amount numeric, transfer_gas_limit numeric, transfer_max_fee numeric, token_balance numeric, native_balance numeric) IS 'Creates a pending transfer that expires after wallet.pendingTtlSeconds, when the chain balances the server read cover it after what is still in flight (amounts in their token, gas in native currency); else AG422 insufficient_funds with the figures. The wallet row lock serializes transfers of one wallet. Server path only: the balances are the server''s reading of the chain.';

REVOKE ALL ON FUNCTION app_private.create_wallet_transfer(owner uuid, chain integer, kind app.wallet_token_kind, token text, symbol text, token_full_name text, decimals integer, recipient text, recipient_user uuid, transfer_amount numeric, transfer_gas_limit numeric, transfer_max_fee numeric, token_balance numeric, native_balance numeric) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.expire_wallet_transfers
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON FUNCTION app_private.expire_wallet_transfers() IS 'pg_cron (agora-expire-wallet-transfers): pending transfers past their expiry become expired, with their event and notification; returns how many.';

REVOKE ALL ON FUNCTION app_private.expire_wallet_transfers() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.finish_wallet_transaction
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON FUNCTION app_private.finish_wallet_transaction(target_id uuid, outcome app.wallet_transaction_status, mined_block bigint, mined_block_hash text, paid_fee numeric, failure text) IS 'Moves a submitted transfer to confirmed or failed with its block, fee and error; false when it had already moved on (a watcher ran twice). Server path only.';

REVOKE ALL ON FUNCTION app_private.finish_wallet_transaction(target_id uuid, outcome app.wallet_transaction_status, mined_block bigint, mined_block_hash text, paid_fee numeric, failure text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.format_token_amount
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON FUNCTION app_private.format_token_amount(amount numeric, decimals integer) IS 'A base-unit amount as whole tokens (trailing zeros dropped), for notification texts.';

REVOKE ALL ON FUNCTION app_private.format_token_amount(amount numeric, decimals integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.insert_wallet
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON FUNCTION app_private.insert_wallet(new_wallet_id uuid, new_owner uuid, new_address text, master_key_id text, sealed_data_key bytea, sealed_private_key bytea) IS 'Stores a new wallet, its sealed key and its nonce counter, and sets the user''s wallet_address; AG409 when the user already has one (a concurrent first sign-in loses cleanly). Server path only.';

REVOKE ALL ON FUNCTION app_private.insert_wallet(new_wallet_id uuid, new_owner uuid, new_address text, master_key_id text, sealed_data_key bytea, sealed_private_key bytea) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.note_chain_head
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.note_chain_head(chain integer, head bigint) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  insert into app_private.chain_heads as h (chain_id, block_number) values (chain, head)
  on conflict (chain_id) do update set block_number = greatest(h.block_number, excluded.block_number),
    updated_at = now()
$$;

COMMENT ON FUNCTION app_private.note_chain_head(chain integer, head bigint) IS 'Records the newest block seen on a chain (never moves back), for confirmation counts.';

REVOKE ALL ON FUNCTION app_private.note_chain_head(chain integer, head bigint) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.refresh_wallet_nfts
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON FUNCTION app_private.refresh_wallet_nfts(chain integer, holders text[], contracts text[], token_ids numeric[]) IS 'Recomputes the holdings of the given (holder, contract, token id) triples from app_private.nft_transfers: positive balances are upserted into app.wallet_nfts with their metadata, the rest deleted. The follower calls it after indexing or rolling back blocks. Server path only.';

REVOKE ALL ON FUNCTION app_private.refresh_wallet_nfts(chain integer, holders text[], contracts text[], token_ids numeric[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.resign_wallet_transaction
-- created in 20261128140000_wallet_resign_outside_nonce.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.resign_wallet_transaction(target_id uuid, replaced_hash text, signed_nonce bigint, signed_hash text, raw text, signed_max_fee numeric, signed_priority_fee numeric) RETURNS app.wallet_transactions
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  updated app.wallet_transactions;
begin
  update app_private.wallet_signed_transactions s
  set raw = resign_wallet_transaction.raw, replaced_hashes = s.replaced_hashes || replaced_hash,
      broadcasts = 0, last_broadcast_at = null
  where s.transaction_id = target_id and s.broadcasts = 0
    and exists (
      select 1 from app.wallet_transactions t
      where t.id = target_id and t.status = 'submitted' and t.hash = replaced_hash
    );
  if not found then
    raise exception 'the transfer was sent, moved on or signed again' using errcode = 'AG409';
  end if;
  update app.wallet_transactions t
  set nonce = signed_nonce, hash = signed_hash,
      max_fee_per_gas = signed_max_fee, max_priority_fee_per_gas = signed_priority_fee
  where t.id = target_id
  returning * into updated;
  return updated;
end;
$$;

COMMENT ON FUNCTION app_private.resign_wallet_transaction(target_id uuid, replaced_hash text, signed_nonce bigint, signed_hash text, raw text, signed_max_fee numeric, signed_priority_fee numeric) IS 'Records a new signature (nonce, hash, raw bytes) for a submitted transfer whose nonce was used outside the platform before any node accepted its bytes, keeping the replaced hash; AG409 when it was broadcast, moved on or signed again. The caller took the nonce with allocate_wallet_nonce in the same transaction. Server path only.';

REVOKE ALL ON FUNCTION app_private.resign_wallet_transaction(target_id uuid, replaced_hash text, signed_nonce bigint, signed_hash text, raw text, signed_max_fee numeric, signed_priority_fee numeric) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.rollback_chain_index
-- created in 20261124130000_wallet.sql; last changed in 20261128130000_wallet_lock_order.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.rollback_chain_index(chain integer, fork bigint, fork_hash text) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  affected integer;
  touched record;
  moved record;
begin
  -- The cursor first, as a range's transaction takes it (its compare-and-set is its first
  -- write): a follower recording blocks and one rolling back then queue on this row, before
  -- either holds a transaction row the other needs.
  perform 1 from app_private.chain_cursors c where c.chain_id = chain for update;
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

COMMENT ON FUNCTION app_private.rollback_chain_index(chain integer, fork bigint, fork_hash text) IS 'Rolls the follower back to block `fork` after a reorganization: incoming transfers and NFT logs above it are deleted (holdings recomputed), outgoing transfers mined above it return to submitted with a wallet.watch job, block hashes above it are dropped and the cursor moves to the fork. Returns the transactions touched. Takes the cursor row first, as a range''s transaction does (its compare-and-set), so a rollback and another follower''s range never deadlock. Server path only.';

REVOKE ALL ON FUNCTION app_private.rollback_chain_index(chain integer, fork bigint, fork_hash text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.submit_wallet_transaction
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

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

COMMENT ON FUNCTION app_private.submit_wallet_transaction(target_id uuid, signed_nonce bigint, signed_hash text, raw text, signed_max_fee numeric, signed_priority_fee numeric) IS 'Records a signed transfer (nonce, hash, the raw bytes) as submitted and queues its wallet.broadcast job, in the confirm''s transaction: the bytes are stored before anything is sent. Server path only.';

REVOKE ALL ON FUNCTION app_private.submit_wallet_transaction(target_id uuid, signed_nonce bigint, signed_hash text, raw text, signed_max_fee numeric, signed_priority_fee numeric) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.sync_wallet_nonce
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.sync_wallet_nonce(wallet uuid, chain_nonce bigint) RETURNS bigint
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update app_private.wallet_nonces n
  set next_nonce = greatest(n.next_nonce, chain_nonce), updated_at = now()
  where n.wallet_id = wallet
  returning n.next_nonce
$$;

COMMENT ON FUNCTION app_private.sync_wallet_nonce(wallet uuid, chain_nonce bigint) IS 'Moves a wallet''s nonce counter up to the chain''s count (never down), after the node said a nonce was taken outside the platform. Server path only.';

REVOKE ALL ON FUNCTION app_private.sync_wallet_nonce(wallet uuid, chain_nonce bigint) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.touch_wallet_transaction
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.touch_wallet_transaction() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  new.updated_at := now();
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.touch_wallet_transaction() IS 'Keeps updated_at on the server''s clock.';

REVOKE ALL ON FUNCTION app_private.touch_wallet_transaction() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.wallet_transaction_events
-- created in 20261124130000_wallet.sql; last changed in 20261129140000_wallet_cancel_transfer.sql
-- ---------------------------------------------------------------------------------------------

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
      when 'cancelled' then 'Transfer cancelled'
    end;
    body := case t.status
      when 'pending' then format('Confirm sending %s to %s before it expires.', amount_text, t.to_address)
      when 'submitted' then format('%s to %s is on its way.', amount_text, t.to_address)
      when 'confirmed' then format('%s reached %s.', amount_text, t.to_address)
      when 'failed' then format('%s to %s did not go through: %s', amount_text, t.to_address, coalesce(t.error, 'failed'))
      when 'expired' then format('%s to %s was not confirmed in time; nothing was sent.', amount_text, t.to_address)
      when 'cancelled' then format('You cancelled sending %s to %s; nothing was sent.', amount_text, t.to_address)
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

COMMENT ON FUNCTION app_private.wallet_transaction_events() IS 'wallet.transaction.updated on user:<owner> and a WALLET notification (one per transaction, collapsed, updated at each change) for every new transaction row and every status change; an incoming row deleted by a reorganization is announced as failed (not one deleted with its wallet, as in an account deletion). security definer: it writes the event log and the inbox.';

REVOKE ALL ON FUNCTION app_private.wallet_transaction_events() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- cron job agora-expire-wallet-transfers
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: * * * * *
-- command:
--   select app_private.expire_wallet_transfers()

-- ---------------------------------------------------------------------------------------------
-- cron job agora-follow-chain
-- created in 20261124130000_wallet.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: * * * * *
-- command:
--   select app_private.enqueue_job('wallet.index', '{}', now(),
--       'wallet.index:' || to_char(date_trunc('minute', now()), 'YYYY-MM-DD"T"HH24:MI'), 3)
--     where not exists (
--       select 1 from app_private.chain_heads h where h.updated_at > now() - interval '1 minute'
--     )
