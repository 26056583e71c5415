begin;
select plan(1);
select has_schema('app', 'The app schema exists.');
select * from finish();
rollback;
