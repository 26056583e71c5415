/*
 * A product status for moderation: `hidden`, a product an ADMIN took out of the catalog after a
 * report (PUT /api/admin/reports/{id} with action `hide_product`, the moderation migration).
 *
 * Its own migration because a value added to an enum cannot be used in the transaction that adds
 * it; the moderation migration after it uses it. Everything that shows the catalog already
 * filters on `status = 'active'` (app.search_products, app.get_product, the partial indexes, the
 * catalog counts' trigger), so a hidden product leaves the catalog, its search and its facets by
 * itself; its vendor's owner and ADMINs still see it (as they see drafts and archived products).
 *
 * Nothing destructive: an enum value is added.
 */

alter type app.product_status add value if not exists 'hidden';

comment on type app.product_status is
  'draft: visible to its vendor only; active: in the catalog (when its vendor is approved) and orderable; archived: withdrawn by its vendor, kept for the orders that name it; hidden: taken out of the catalog by an ADMIN after a report (only an ADMIN sets or lifts it).';
