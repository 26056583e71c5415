/*
 * Local mode only: the mail the stack would have sent, kept for `GET /_dev/mail?to=`. It is in
 * the database (not process memory) so every stack process sees the same mailbox. Only the
 * server's own connection reads or writes it: RLS is on with no policies, and the API roles have
 * no grants.
 */
create schema if not exists dev;

create table if not exists dev.mail (
  id bigint generated always as identity primary key,
  to_address text not null,
  subject text not null,
  text_body text not null,
  links text[] not null default '{}',
  created_at timestamptz not null default now()
);
-- The mail's Message-ID, when the sender gave a stable one (a notification delivery's): the same
-- message is kept once, however many attempts sent it. Added after the table, for mailboxes
-- made before.
alter table dev.mail add column if not exists message_id text;
create unique index if not exists mail_message_id_key on dev.mail (message_id);
create index if not exists mail_to_address_created_at_idx on dev.mail (lower(to_address), created_at desc);
alter table dev.mail enable row level security;
revoke all on schema dev from public, anon, authenticated;
revoke all on dev.mail from public, anon, authenticated;
