CREATE TABLE IF NOT EXISTS owners (id bigserial PRIMARY KEY, last_name text NOT NULL, city text NOT NULL);
INSERT INTO owners (last_name, city)
SELECT v.last_name, v.city FROM (VALUES ('Franklin', 'Madison'), ('Davis', 'Sun Prairie'), ('Davis', 'Windsor'),
    ('Black', 'Monona'), ('Escobito', 'Madison')) AS v (last_name, city)
WHERE NOT EXISTS (SELECT 1 FROM owners);
