-- Replaces functions of other domains:
--   app_private.collect_orphan_attachments (attachments).
/*
 * Product pictures uploaded by the shop (issue 27: "product images only as https URLs: no
 * upload"). The vendor uploads the file as any upload (POST /api/attachments) and lists it among
 * the product's `images` as `/api/store/images/<attachmentId>`; GET /api/store/images/{id}
 * serves it to anyone who may see the product (the rule of app.get_product), nobody else.
 *
 * - app.product_images: which upload is a picture of which product (one product per upload).
 *   No grants: written by app.link_product_images, read by app.product_image.
 * - app.link_product_images(product, attachments): the product is one of the caller's approved
 *   vendor's (AG403), each upload the caller's own and not attached to a message (AG404, so
 *   another person's file is indistinguishable from none), a PNG, JPEG, GIF or WebP (AG415), and
 *   not already another product's (AG404).
 * - app.product_image(attachment): the stored file, for whoever may see a product that shows it.
 * - app_private.collect_orphan_attachments also keeps product pictures, and first forgets the
 *   links of pictures a product stopped showing a day ago (their files then go as orphans).
 *
 * Nothing destructive: a new table and functions, one function replaced.
 */

-- Tables ---------------------------------------------------------------------------------------

create table app.product_images (
  attachment_id uuid primary key references app.attachments (id) on delete cascade,
  product_id uuid not null references app.products (id) on delete cascade,
  created_at timestamptz not null default now()
);

comment on table app.product_images is 'Uploads that are pictures of a product (GET /api/store/images/{id}): one product per upload. Without it an upload not attached to a message is an orphan, and nothing says who may see it. No grants to API roles: app.link_product_images writes it, app.product_image reads it.';

-- Indexes ----------------------------------------------------------------------------------------

create index product_images_product_id_idx on app.product_images (product_id);

-- Row-level security -----------------------------------------------------------------------------

alter table app.product_images enable row level security;

-- API functions ----------------------------------------------------------------------------------

create function app.link_product_images(target_product_id uuid, attachment_ids uuid[])
returns void
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  wanted uuid;
  upload app.attachments;
begin
  if not exists (
    select 1 from app.products p
    where p.id = target_product_id and p.vendor_id in (select app.my_selling_vendor_ids())
  ) then
    raise exception 'only the product''s vendor can set its pictures' using errcode = 'AG403';
  end if;
  foreach wanted in array coalesce(attachment_ids, '{}') loop
    select * into upload from app.attachments a
    where a.id = wanted and a.uploader_id = (select auth.uid()) and a.message_id is null;
    if not found or exists (
      select 1 from app.product_images i
      where i.attachment_id = wanted and i.product_id <> target_product_id
    ) then
      raise exception 'no such upload: %', wanted using errcode = 'AG404';
    end if;
    if upload.content_type not in ('image/png', 'image/jpeg', 'image/gif', 'image/webp') then
      raise exception 'a product picture is a PNG, JPEG, GIF or WebP image' using errcode = 'AG415';
    end if;
    insert into app.product_images (attachment_id, product_id)
    values (wanted, target_product_id)
    on conflict (attachment_id) do nothing;
  end loop;
end;
$$;

comment on function app.link_product_images(uuid, uuid[]) is 'POST and PUT /api/store/products: the uploads a product lists as /api/store/images/<id> become its pictures. The product must be the caller''s approved vendor''s (AG403); each upload the caller''s own, not attached to a message and not another product''s (AG404 otherwise, so another person''s file is indistinguishable from none), an image (AG415). security definer: app.product_images has no grants; the rules are checked here.';

revoke all on function app.link_product_images(uuid, uuid[]) from public;
grant execute on function app.link_product_images(uuid, uuid[]) to authenticated;

create function app.product_image(target_attachment_id uuid)
returns table (content_type text, storage_key text, size bigint)
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return query
    select a.content_type, a.storage_key, a.size
    from app.product_images i
    join app.attachments a on a.id = i.attachment_id
    join app.products p on p.id = i.product_id
    join app.vendors v on v.id = p.vendor_id
    where i.attachment_id = target_attachment_id
      and ('/api/store/images/' || i.attachment_id::text) = any (p.images)
      and ((p.status = 'active' and v.status = 'approved')
           or p.vendor_id in (select app.my_vendor_ids())
           or app.is_admin());
end;
$$;

comment on function app.product_image(uuid) is 'GET /api/store/images/{id}: the stored file of a product picture, for whoever may see a product that shows it (app.get_product''s rule: catalog products for anyone, others for their vendor''s owner and ADMINs); no row otherwise. security definer: the upload is not attached to a conversation of the caller''s, so attachment RLS would hide it; this returns only a file a visible product names.';

revoke all on function app.product_image(uuid) from public;
grant execute on function app.product_image(uuid) to anon, authenticated;

-- Replaced ---------------------------------------------------------------------------------------

create or replace function app_private.collect_orphan_attachments(older_than interval default '24 hours')
returns void
language sql
set search_path = ''
as $$
  -- A picture its product stopped showing is no longer the product's.
  delete from app.product_images i
  using app.products p
  where p.id = i.product_id and i.created_at < now() - older_than
    and not (('/api/store/images/' || i.attachment_id::text) = any (p.images));
  delete from app.attachments a
  where a.message_id is null and a.created_at < now() - older_than
    and not exists (select 1 from app.users u where u.image_attachment_id = a.id)
    and not exists (select 1 from app.product_images i where i.attachment_id = a.id);
$$;

comment on function app_private.collect_orphan_attachments(interval) is 'Uploads never attached within older_than, and neither a profile picture nor a product''s picture, are dropped (their files queued by the delete trigger); a product picture the product stopped showing within older_than stops being one first. Run hourly by pg_cron.';

revoke execute on all functions in schema app, app_private from public;
