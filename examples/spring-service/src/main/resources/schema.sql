CREATE TABLE IF NOT EXISTS product (id bigint PRIMARY KEY, name text NOT NULL);
INSERT INTO product (id, name) VALUES (1, 'anchor'), (2, 'bollard'), (3, 'capstan') ON CONFLICT DO NOTHING;
CREATE TABLE IF NOT EXISTS report_run (id bigserial PRIMARY KEY, products int NOT NULL, at timestamptz DEFAULT now());
CREATE TABLE IF NOT EXISTS product_archive (id bigint PRIMARY KEY, name text NOT NULL);
