-- Studio API schema. Forward-only: never edit a landed migration, add the next number.
-- Every tenant table carries studio_id and a (studio_id, id) key, so foreign keys keep
-- tenancy too: a row can only point at rows of its own studio.
create extension if not exists btree_gist;

create table studios (
  id            text primary key,
  name          text not null check (length(name) between 1 and 120),
  slug          text not null unique check (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  timezone      text not null default 'UTC',
  currency      text not null default 'USD' check (currency ~ '^[A-Z]{3}$'),
  locale        text not null default 'en-US',
  enabled_modes text[] not null default '{broadcast,two_way,community,coaching}'
                check (enabled_modes <@ '{broadcast,two_way,community,coaching}'),
  primary_color text,
  logo_url      text,
  deleted_at    timestamptz,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
-- studios are their own tenant; the column exists so every table reads alike
alter table studios add column studio_id text generated always as (id) stored;

create table api_keys (
  id           text primary key,
  studio_id    text not null references studios(id),
  kind         text not null check (kind in ('publishable', 'secret')),
  name         text not null check (length(name) between 1 and 100),
  scopes       text[] not null default '{}',
  hash         text not null unique check (hash ~ '^[0-9a-f]{64}$'),
  hint         text not null,
  created_at   timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at   timestamptz,
  check (kind = 'secret' or scopes = '{}')
);
create index api_keys_studio on api_keys (studio_id, created_at, id);

create table activity (
  id           bigint generated always as identity primary key,
  studio_id    text not null references studios(id),
  key_id       text references api_keys(id),
  operation_id text,
  method       text not null,
  path         text not null,
  status       smallint not null,
  outcome      text not null check (outcome in ('success', 'client_error', 'server_error')),
  duration_ms  real not null,
  request_id   text not null,
  at           timestamptz not null
);
create index activity_studio_at on activity (studio_id, at desc, id desc);
create index activity_studio_key_at on activity (studio_id, key_id, at desc, id desc);

create table instructors (
  id          text primary key,
  studio_id   text not null references studios(id),
  name        text not null check (length(name) between 1 and 120),
  email       text,
  bio         text check (length(bio) <= 2000),
  photo_url   text,
  disciplines text[] not null default '{}',
  active      boolean not null default true,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now(),
  unique (studio_id, id)
);
create index instructors_studio on instructors (studio_id, created_at, id);

create table locations (
  id         text primary key,
  studio_id  text not null references studios(id),
  name       text not null check (length(name) between 1 and 200),
  timezone   text not null,
  address    jsonb,
  status     text not null default 'live' check (status in ('live', 'deleted')),
  deleted_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (studio_id, id)
);
create index locations_studio on locations (studio_id, created_at, id);

create table rooms (
  id          text primary key,
  studio_id   text not null,
  location_id text not null,
  name        text not null check (length(name) between 1 and 200),
  capacity    integer check (capacity between 1 and 10000),
  status      text not null default 'live' check (status in ('live', 'deleted')),
  deleted_at  timestamptz,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now(),
  unique (studio_id, id),
  foreign key (studio_id, location_id) references locations (studio_id, id)
);
create index rooms_location on rooms (studio_id, location_id, created_at, id);

create table plans (
  id          text primary key,
  studio_id   text not null references studios(id),
  name        text not null check (length(name) between 1 and 200),
  type        text not null check (type in ('membership', 'class_pack', 'drop_in')),
  config      jsonb not null,
  description text,
  visibility  text not null default 'public' check (visibility in ('public', 'private')),
  status      text not null default 'active' check (status in ('active', 'archived')),
  archived_at timestamptz,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now(),
  unique (studio_id, id)
);
create index plans_studio on plans (studio_id, created_at, id);

create table classes (
  id               text primary key,
  studio_id        text not null references studios(id),
  title            text not null check (length(title) between 1 and 200),
  mode             text not null check (mode in ('broadcast', 'two_way', 'community', 'coaching')),
  instructor_id    text not null,
  starts_at        timestamptz not null,
  duration_minutes integer not null check (duration_minutes between 5 and 720),
  discipline       text check (length(discipline) between 1 and 60),
  level            text not null default 'all_levels' check (level in ('all_levels', 'beginner', 'intermediate', 'advanced')),
  capacity         integer check (capacity between 1 and 10000),
  visibility       text not null default 'public' check (visibility in ('public', 'unlisted', 'private')),
  location_id      text,
  room_id          text,
  recurrence       jsonb,
  status           text not null default 'scheduled' check (status in ('scheduled', 'cancelled')),
  cancelled_at     timestamptz,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now(),
  unique (studio_id, id),
  foreign key (studio_id, instructor_id) references instructors (studio_id, id),
  foreign key (studio_id, location_id) references locations (studio_id, id),
  foreign key (studio_id, room_id) references rooms (studio_id, id)
);
create index classes_studio on classes (studio_id, created_at, id);

create table class_plans (
  studio_id text not null,
  class_id  text not null,
  plan_id   text not null,
  primary key (class_id, plan_id),
  foreign key (studio_id, class_id) references classes (studio_id, id),
  foreign key (studio_id, plan_id) references plans (studio_id, id)
);

create table occurrences (
  id               text primary key,
  studio_id        text not null,
  class_id         text not null,
  instructor_id    text not null,
  starts_at        timestamptz not null,
  ends_at          timestamptz not null,
  duration_minutes integer not null check (duration_minutes between 5 and 720),
  location_id      text,
  room_id          text,
  capacity         integer,
  status           text not null default 'scheduled' check (status in ('scheduled', 'cancelled')),
  cancelled_at     timestamptz,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now(),
  unique (studio_id, id),
  check (ends_at = starts_at + make_interval(mins => duration_minutes)),
  foreign key (studio_id, class_id) references classes (studio_id, id),
  foreign key (studio_id, instructor_id) references instructors (studio_id, id),
  -- no instructor teaches two live occurrences at once, however many requests race
  constraint occurrences_no_double_booking exclude using gist (
    instructor_id with =, tstzrange(starts_at, ends_at, '[)') with &&
  ) where (status = 'scheduled')
);
-- Storefront: a studio's upcoming live occurrences, an index range scan on start time.
create index occurrences_upcoming on occurrences (studio_id, starts_at) include (class_id) where status = 'scheduled';
-- Management schedule keyset (starts_at, id), and per-class work.
create index occurrences_schedule on occurrences (studio_id, starts_at, id);
create index occurrences_class on occurrences (class_id, starts_at);

create table members (
  id           text primary key,
  studio_id    text not null references studios(id),
  email        text not null check (email = lower(email) and email ~ '^[^@\s]+@[^@\s]+$'),
  name         text,
  role         text not null default 'member' check (role in ('admin', 'manager', 'instructor', 'front_desk', 'member')),
  status       text not null default 'invited' check (status in ('invited', 'active', 'cancelled')),
  invited_at   timestamptz,
  cancelled_at timestamptz,
  created_at   timestamptz not null default now(),
  updated_at   timestamptz not null default now(),
  unique (studio_id, id)
);
-- one e-mail per studio among memberships that are not cancelled (a cancelled one may be re-invited)
create unique index members_email on members (studio_id, email) where status <> 'cancelled';
create index members_studio on members (studio_id, created_at, id);

create table coupons (
  id              text primary key,
  studio_id       text not null references studios(id),
  code            text not null check (code ~ '^[A-Z0-9_-]{3,32}$'),
  config          jsonb not null,
  max_redemptions integer check (max_redemptions >= 1),
  expires_at      timestamptz,
  status          text not null default 'active' check (status in ('active', 'archived')),
  archived_at     timestamptz,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  unique (studio_id, id)
);
create unique index coupons_active_code on coupons (studio_id, code) where status = 'active';
create index coupons_studio on coupons (studio_id, created_at, id);

create table programs (
  id          text primary key,
  studio_id   text not null references studios(id),
  name        text not null check (length(name) between 1 and 200),
  description text,
  pricing     text not null check (pricing in ('free', 'paid')),
  price_cents integer,
  currency    text check (currency ~ '^[A-Z]{3}$'),
  class_ids   text[] not null default '{}',
  status      text not null default 'active' check (status in ('active', 'archived')),
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now(),
  unique (studio_id, id),
  check ((pricing = 'paid' and price_cents > 0 and currency is not null)
      or (pricing = 'free' and price_cents is null and currency is null))
);
create index programs_studio on programs (studio_id, created_at, id);

create table content (
  id               text primary key,
  studio_id        text not null references studios(id),
  title            text not null check (length(title) between 1 and 200),
  description      text,
  duration_seconds integer check (duration_seconds >= 0),
  instructor_id    text,
  visibility       text not null default 'public' check (visibility in ('public', 'members_only', 'private')),
  status           text not null default 'ready' check (status in ('ready', 'processing')),
  deleted_at       timestamptz,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now(),
  unique (studio_id, id),
  foreign key (studio_id, instructor_id) references instructors (studio_id, id)
);
create index content_studio on content (studio_id, created_at, id);

create table sites (
  studio_id      text primary key references studios(id),
  title          text not null,
  tagline        text,
  description    text,
  logo_url       text,
  hero_image_url text,
  contact_email  text,
  phone          text,
  address        jsonb,
  social         jsonb,
  published_at   timestamptz,
  updated_at     timestamptz not null default now()
);

create table policies (
  studio_id           text primary key references studios(id),
  cancellation        text,
  late_cancel_minutes integer check (late_cancel_minutes >= 0),
  no_show             text,
  terms               text,
  privacy             text,
  waiver              text,
  updated_at          timestamptz not null default now()
);

-- Contract §5: committed in the same transaction as the action it records.
create table idempotency_records (
  studio_id   text not null references studios(id),
  key         text not null check (length(key) between 1 and 255),
  fingerprint text not null,
  status      smallint not null,
  headers     jsonb not null default '{}',
  body        text not null,
  created_at  timestamptz not null default now(),
  expires_at  timestamptz not null,
  primary key (studio_id, key)
);
create index idempotency_records_expiry on idempotency_records (expires_at);

-- Dashboard sign-in: single-use login links and server-side sessions.
create table login_links (
  id         text primary key,
  studio_id  text not null references studios(id),
  expires_at timestamptz not null,
  used_at    timestamptz,
  created_at timestamptz not null default now()
);
create table dashboard_sessions (
  id         text primary key,
  studio_id  text not null references studios(id),
  csrf_token text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
