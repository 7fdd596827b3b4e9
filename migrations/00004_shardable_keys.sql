-- A schema that can be distributed by studio (Citus): every tenant table's primary, unique and
-- exclusion constraints include studio_id, the distribution column. Foreign keys between tenant
-- tables already carry studio_id; they are dropped and re-made against the new primary keys.
-- Reference tables, looked up by something other than a studio (studios, api_keys by hash,
-- login_links and dashboard_sessions by token), keep their keys: see docs/scaling.md.

alter table rooms drop constraint rooms_studio_id_location_id_fkey;
alter table classes drop constraint classes_studio_id_instructor_id_fkey,
                    drop constraint classes_studio_id_location_id_fkey,
                    drop constraint classes_studio_id_room_id_fkey;
alter table class_plans drop constraint class_plans_studio_id_class_id_fkey,
                        drop constraint class_plans_studio_id_plan_id_fkey;
alter table occurrences drop constraint occurrences_studio_id_class_id_fkey,
                        drop constraint occurrences_studio_id_instructor_id_fkey;
alter table content drop constraint content_studio_id_instructor_id_fkey;

-- (studio_id, id) becomes the primary key; the unique constraint it repeats goes
alter table instructors drop constraint instructors_pkey, drop constraint instructors_studio_id_id_key, add primary key (studio_id, id);
alter table locations   drop constraint locations_pkey,   drop constraint locations_studio_id_id_key,   add primary key (studio_id, id);
alter table rooms       drop constraint rooms_pkey,       drop constraint rooms_studio_id_id_key,       add primary key (studio_id, id);
alter table plans       drop constraint plans_pkey,       drop constraint plans_studio_id_id_key,       add primary key (studio_id, id);
alter table classes     drop constraint classes_pkey,     drop constraint classes_studio_id_id_key,     add primary key (studio_id, id);
alter table occurrences drop constraint occurrences_pkey, drop constraint occurrences_studio_id_id_key, add primary key (studio_id, id);
alter table members     drop constraint members_pkey,     drop constraint members_studio_id_id_key,     add primary key (studio_id, id);
alter table coupons     drop constraint coupons_pkey,     drop constraint coupons_studio_id_id_key,     add primary key (studio_id, id);
alter table programs    drop constraint programs_pkey,    drop constraint programs_studio_id_id_key,    add primary key (studio_id, id);
alter table content     drop constraint content_pkey,     drop constraint content_studio_id_id_key,     add primary key (studio_id, id);
alter table class_plans drop constraint class_plans_pkey, add primary key (studio_id, class_id, plan_id);
alter table activity    drop constraint activity_pkey,    add primary key (studio_id, id);

-- no instructor teaches two live occurrences at once, per studio (same name: the API maps it to 409)
alter table occurrences drop constraint occurrences_no_double_booking,
  add constraint occurrences_no_double_booking exclude using gist (
    studio_id with =, instructor_id with =, tstzrange(starts_at, ends_at, '[)') with &&
  ) where (status = 'scheduled');

alter table rooms add foreign key (studio_id, location_id) references locations (studio_id, id);
alter table classes add foreign key (studio_id, instructor_id) references instructors (studio_id, id),
                    add foreign key (studio_id, location_id) references locations (studio_id, id),
                    add foreign key (studio_id, room_id) references rooms (studio_id, id);
alter table class_plans add foreign key (studio_id, class_id) references classes (studio_id, id),
                        add foreign key (studio_id, plan_id) references plans (studio_id, id);
alter table occurrences add foreign key (studio_id, class_id) references classes (studio_id, id),
                        add foreign key (studio_id, instructor_id) references instructors (studio_id, id);
alter table content add foreign key (studio_id, instructor_id) references instructors (studio_id, id);
