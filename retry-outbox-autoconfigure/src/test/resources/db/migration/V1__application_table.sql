-- An application's own migration: adding the starter must not run it.
CREATE TABLE application_table_that_must_not_exist (id int);
