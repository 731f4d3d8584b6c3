-- Ordinary MySQL/MariaDB text that a service sends inside a transaction, one statement per line, written here in the
-- shapes that ORMs (Hibernate, JPA, jOOQ, Rails), WordPress-style PHP and reporting code produce; none may be refused.
-- MySqlStatementsTest reads every line that is not a comment.
select film0_.film_id as film_id1_8_, film0_.title as title2_8_ from film film0_ where film0_.film_id=?
select actor0_.actor_id as actor_id1_0_0_, actor0_.first_name as first_na2_0_0_ from actor actor0_ where actor0_.actor_id=?
insert into customer (active, address_id, create_date, email, first_name, last_name, store_id) values (?, ?, ?, ?, ?, ?, ?)
update customer set active=?, email=?, last_update=? where customer_id=?
delete from film_actor where actor_id=? and film_id=?
select count(*) as col_0_0_ from rental rental0_ where rental0_.customer_id=? and rental0_.return_date is null
select next_val as id_val from hibernate_sequence for update
update hibernate_sequence set next_val= ? where next_val=?
SELECT `film`.`film_id`, `film`.`title` FROM `film` WHERE `film`.`rating` = 'PG-13' ORDER BY `film`.`title` ASC LIMIT 20
SELECT `users`.* FROM `users` WHERE `users`.`email` = 'ann@example.com' LIMIT 1
INSERT INTO `orders` (`customer_id`, `total`, `created_at`, `updated_at`) VALUES (42, 19.99, '2026-12-07 10:00:00', '2026-12-07 10:00:00')
UPDATE `orders` SET `status` = 'paid', `updated_at` = '2026-12-07 10:01:00' WHERE `orders`.`id` = 7
DELETE FROM `sessions` WHERE `sessions`.`updated_at` < '2026-11-07 00:00:00'
SELECT option_value FROM wp_options WHERE option_name = 'siteurl' LIMIT 1
SELECT SQL_CALC_FOUND_ROWS wp_posts.ID FROM wp_posts WHERE 1=1 AND wp_posts.post_type = 'post' AND (wp_posts.post_status = 'publish') ORDER BY wp_posts.post_date DESC LIMIT 0, 10
SELECT FOUND_ROWS()
INSERT INTO `wp_postmeta` (`post_id`, `meta_key`, `meta_value`) VALUES (12, '_edit_lock', '1733565600:1')
UPDATE `wp_options` SET `option_value` = 'a:1:{s:4:\"time\";i:1733565600;}' WHERE `option_name` = 'cron'
SELECT t.*, tt.* FROM wp_terms AS t INNER JOIN wp_term_taxonomy AS tt ON t.term_id = tt.term_id WHERE tt.taxonomy IN ('category') ORDER BY t.name ASC
SELECT c.customer_id, c.first_name, c.last_name, SUM(p.amount) AS total FROM customer c JOIN payment p ON p.customer_id = c.customer_id GROUP BY c.customer_id HAVING total > 100 ORDER BY total DESC
SELECT f.title, COUNT(r.rental_id) AS rentals FROM film f JOIN inventory i ON i.film_id = f.film_id JOIN rental r ON r.inventory_id = i.inventory_id GROUP BY f.film_id ORDER BY rentals DESC LIMIT 10
SELECT s.store_id, DATE_FORMAT(p.payment_date, '%Y-%m') AS month, SUM(p.amount) FROM payment p JOIN staff s ON s.staff_id = p.staff_id GROUP BY s.store_id, month
SELECT a.first_name, a.last_name FROM actor a WHERE a.actor_id IN (SELECT fa.actor_id FROM film_actor fa WHERE fa.film_id = 1)
SELECT * FROM film WHERE MATCH(title, description) AGAINST ('drama' IN NATURAL LANGUAGE MODE)
SELECT title FROM film WHERE description LIKE '%Commit%' OR description LIKE '%begin%'
SELECT CONCAT(first_name, ' ', last_name) AS name FROM actor WHERE last_name REGEXP '^[A-C]'
SELECT IFNULL(return_date, NOW()) - rental_date AS held FROM rental WHERE rental_id = 3
SELECT COALESCE(MAX(id), 0) + 1 FROM invoices FOR UPDATE
SELECT id FROM jobs WHERE state = 'ready' ORDER BY priority DESC, id LIMIT 10 FOR UPDATE SKIP LOCKED
SELECT id FROM accounts WHERE id = 5 LOCK IN SHARE MODE
SELECT id FROM accounts WHERE id = 5 FOR SHARE
UPDATE accounts SET balance = balance - 100 WHERE id = 5 AND balance >= 100
UPDATE accounts SET balance = balance + 100 WHERE id = 6
INSERT INTO ledger (account_id, amount, note) VALUES (5, -100, 'transfer to 6'), (6, 100, 'transfer from 5')
INSERT INTO counters (name, value) VALUES ('visits', 1) ON DUPLICATE KEY UPDATE value = value + 1
INSERT INTO tags (name) VALUES ('sale') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)
SELECT LAST_INSERT_ID()
INSERT IGNORE INTO page_views (page_id, day, views) VALUES (3, CURDATE(), 1)
REPLACE INTO settings (k, v) VALUES ('theme', 'dark')
INSERT INTO archive SELECT * FROM events WHERE created_at < NOW() - INTERVAL 30 DAY
DELETE FROM events WHERE created_at < NOW() - INTERVAL 30 DAY LIMIT 1000
DELETE e FROM events e JOIN users u ON u.id = e.user_id WHERE u.deleted = 1
UPDATE orders o JOIN customers c ON c.id = o.customer_id SET o.region = c.region WHERE o.region IS NULL
SELECT JSON_EXTRACT(payload, '$.items[0].sku') FROM webhooks WHERE id = 9
SELECT JSON_OBJECT('id', id, 'name', name) FROM products WHERE id = 1
SELECT id, data->>'$.status' AS status FROM documents WHERE data->'$.owner' = 'ann'
UPDATE documents SET data = JSON_SET(data, '$.status', 'archived') WHERE id = 4
SELECT * FROM products WHERE JSON_CONTAINS(tags, '"sale"')
WITH recent AS (SELECT customer_id, MAX(rental_date) AS last FROM rental GROUP BY customer_id) SELECT c.email FROM customer c JOIN recent r ON r.customer_id = c.customer_id WHERE r.last < NOW() - INTERVAL 1 YEAR
WITH RECURSIVE tree AS (SELECT id, parent_id FROM categories WHERE id = 1 UNION ALL SELECT c.id, c.parent_id FROM categories c JOIN tree t ON c.parent_id = t.id) SELECT id FROM tree
SELECT customer_id, amount, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY payment_date DESC) AS rn FROM payment
SELECT DATE(created_at) AS day, COUNT(*) FROM orders WHERE created_at >= '2026-12-01' GROUP BY DATE(created_at) WITH ROLLUP
SELECT SQL_NO_CACHE COUNT(*) FROM orders
SELECT /*+ MAX_EXECUTION_TIME(1000) */ id FROM orders WHERE status = 'new'
SELECT /*+ SET_VAR(sort_buffer_size = 16M) */ name FROM products ORDER BY name
SELECT id FROM orders USE INDEX (idx_status) WHERE status = 'new'
SELECT id FROM orders FORCE INDEX (PRIMARY) WHERE id > 100 ORDER BY id LIMIT 50
SELECT STRAIGHT_JOIN o.id FROM orders o JOIN customers c ON c.id = o.customer_id
EXPLAIN SELECT * FROM orders WHERE customer_id = 42
EXPLAIN FORMAT=JSON SELECT * FROM orders WHERE customer_id = 42
SHOW WARNINGS
SHOW COLUMNS FROM orders
SHOW INDEX FROM orders
SHOW CREATE TABLE orders
SHOW VARIABLES LIKE 'max_connections'
SHOW ENGINE INNODB STATUS
DESCRIBE orders
SELECT @@tx_isolation
SELECT @@transaction_isolation
SELECT @@session.autocommit
SELECT DATABASE(), USER(), VERSION(), CONNECTION_ID()
SELECT NOW(6), UTC_TIMESTAMP(), UNIX_TIMESTAMP()
SELECT UUID(), UUID_SHORT()
SELECT RAND() * 100
SELECT SLEEP(0)
SELECT BENCHMARK(1, MD5('x'))
SELECT CAST('2026-12-07' AS DATE) + INTERVAL 1 DAY
SELECT CONVERT('abc' USING utf8mb4)
SELECT _utf8mb4'caf\u00e9' COLLATE utf8mb4_unicode_ci
SELECT X'4D7953514C', 0x41, b'1010'
SELECT 'It''s fine; commit later' AS note
SELECT "double ""quoted""; begin" AS note
SELECT 'back\\slash; rollback' AS note
SELECT 'a' 'b' 'c'
SELECT `select`, `commit`, `begin` FROM `weird names` WHERE `;` = 1
SELECT id FROM t WHERE name = 'x' -- trailing comment; commit
SELECT id FROM t # hash comment; rollback
SELECT id /* inline; commit */ FROM t
SELECT 5 - -1, 5--1
SELECT 10 DIV 3, 10 MOD 3, 7 % 3
SELECT a <=> b FROM t
SELECT IF(qty > 0, 'in stock', 'sold out') FROM stock
SELECT CASE WHEN price > 100 THEN 'high' ELSE 'low' END FROM products
SELECT GROUP_CONCAT(name ORDER BY name SEPARATOR ', ') FROM tags
SELECT FIND_IN_SET('b', 'a,b,c')
SELECT SUBSTRING_INDEX(email, '@', -1) AS domain FROM users
SELECT ST_Distance_Sphere(POINT(2.35, 48.85), POINT(-0.12, 51.5))
SELECT * FROM t1 NATURAL JOIN t2
SELECT * FROM t1 LEFT JOIN t2 USING (id) WHERE t2.id IS NULL
SELECT * FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.t1_id = t1.id)
SELECT id FROM t1 UNION SELECT id FROM t2
SELECT id FROM t1 UNION ALL SELECT id FROM t2 ORDER BY id LIMIT 10 OFFSET 20
(SELECT id FROM t1 ORDER BY id LIMIT 5) UNION (SELECT id FROM t2 ORDER BY id LIMIT 5)
SELECT * FROM t WHERE (a, b) IN ((1, 2), (3, 4))
SELECT * FROM t WHERE created_at BETWEEN '2026-01-01' AND '2026-12-31'
SELECT * FROM t WHERE name SOUNDS LIKE 'jon'
SELECT * FROM t PARTITION (p0)
SELECT * FROM t TABLESAMPLE
SELECT id INTO @last_id FROM orders ORDER BY id DESC LIMIT 1
SET @last_id = NULL
SET @rank := 0
SELECT @rank := @rank + 1 AS rank, name FROM players ORDER BY score DESC
SAVEPOINT before_bulk
ROLLBACK TO SAVEPOINT before_bulk
ROLLBACK WORK TO before_bulk
RELEASE SAVEPOINT before_bulk
SET TRANSACTION ISOLATION LEVEL SERIALIZABLE
SET TRANSACTION READ ONLY
SET STATEMENT max_statement_time = 5 FOR SELECT * FROM big_table
SET STATEMENT innodb_lock_wait_timeout = 1 FOR UPDATE jobs SET state = 'taken' WHERE id = 3
DO RELEASE_LOCK('nothing-held')
SELECT IS_FREE_LOCK('batch'), IS_USED_LOCK('batch')
SELECT RELEASE_ALL_LOCKS()
DROP TEMPORARY TABLE IF EXISTS scratch
CALL refresh_totals(42)
LOAD DATA LOCAL INFILE '/tmp/rows.csv' INTO TABLE staging FIELDS TERMINATED BY ','
SELECT * FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = CONNECTION_ID()
SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()
SELECT * FROM performance_schema.data_locks
CHECKSUM TABLE orders
TABLE orders
VALUES ROW(1, 'a'), ROW(2, 'b')
SELECT 1 FROM DUAL
SELECT NOT 1, !0, ~1, 1 << 2, 8 >> 1, 6 & 3, 6 | 3, 6 ^ 3
SELECT 'semi;colon' = 'semi;colon'
INSERT INTO notes (body) VALUES ('line one\nline two; commit; begin')
INSERT INTO notes (body) VALUES ("it\"s; rollback")
INSERT INTO notes (body) VALUES ('emoji \u2603; create table x')
UPDATE notes SET body = CONCAT(body, ' -- edited') WHERE id = 1
SELECT * FROM `db-name`.`table-name` WHERE `col``with``ticks` = 1
SELECT $total FROM sums
SELECT 1 AS `create`, 2 AS `drop`, 3 AS `alter`, 4 AS `truncate`
SELECT create_time, drop_reason, alter_count FROM audits
SELECT commit_id, begin_at, rollback_reason FROM deployments
SELECT lock_tables, use_count FROM stats
SELECT * FROM grants WHERE revoke_at IS NULL
SELECT analyze_score FROM reports
INSERT INTO audit (action) VALUES ('DROP TABLE users; --')
SELECT HEX(AES_ENCRYPT('text', 'key'))
SELECT PASSWORD_EXPIRED FROM mysql_user_view
SELECT * FROM t WHERE id = ? AND version = ?
UPDATE t SET version = version + 1, name = ? WHERE id = ? AND version = ?
INSERT INTO t (id, name) VALUES (?, ?), (?, ?), (?, ?)
SELECT * FROM t WHERE name LIKE CONCAT('%', ?, '%') ESCAPE '\\'
SELECT * FROM t ORDER BY FIELD(status, 'new', 'paid', 'shipped')
SELECT ELT(2, 'a', 'b', 'c'), MAKE_SET(5, 'a', 'b', 'c')
SELECT id FROM t WHERE tags REGEXP '[[:<:]]sale[[:>:]]'
SELECT TIMESTAMPDIFF(MINUTE, started_at, ended_at) FROM runs
SELECT DATE_ADD(NOW(), INTERVAL '1:30' HOUR_MINUTE)
SELECT LAST_DAY(NOW()), DAYOFWEEK(NOW()), WEEK(NOW(), 3)
SELECT CHAR_LENGTH('café'), LENGTH('café'), OCTET_LENGTH('café')
SELECT LPAD(id, 8, '0') FROM invoices
SELECT FORMAT(1234567.891, 2, 'de_DE')
SELECT INET_ATON('10.0.0.1'), INET6_NTOA(UNHEX('0A000001'))
SELECT COMPRESS('x'), UNCOMPRESS(COMPRESS('x'))
SELECT SHA2('x', 256), MD5('x'), CRC32('x')
SELECT GREATEST(1, 2, 3), LEAST(1, 2, 3)
SELECT NULLIF(a, 0), IFNULL(b, 0) FROM t
SELECT * FROM t WHERE a IS NOT NULL AND b IS TRUE AND c IS NOT UNKNOWN
SELECT * FROM t LIMIT 10, 20
SELECT * FROM t ORDER BY RAND() LIMIT 1
SELECT DISTINCT customer_id FROM orders
SELECT customer_id, COUNT(*) c FROM orders GROUP BY customer_id HAVING c > 1
SELECT * FROM orders WHERE customer_id = 42 AND created_at > NOW() - INTERVAL 7 DAY ORDER BY created_at DESC
INSERT INTO order_items (order_id, product_id, qty, price) SELECT 7, id, 1, price FROM products WHERE id IN (1, 2, 3)
UPDATE products SET stock = stock - 1 WHERE id = 3 AND stock > 0
UPDATE LOW_PRIORITY products SET views = views + 1 WHERE id = 3
DELETE QUICK FROM cache WHERE expires_at < NOW()
INSERT DELAYED INTO log (msg) VALUES ('hello')
SELECT HIGH_PRIORITY id FROM t
SELECT SQL_BUFFER_RESULT id FROM t
SELECT * FROM t WINDOW w AS (ORDER BY id)
SELECT * FROM JSON_TABLE('[1,2]', '$[*]' COLUMNS (x INT PATH '$')) AS jt
SELECT * FROM t AS OF TIMESTAMP '2026-12-01 00:00:00'
SELECT NEXTVAL(order_seq)
SELECT NEXT VALUE FOR order_seq
SELECT LASTVAL(order_seq)
SELECT SETVAL(order_seq, 100)
select order0_.id as id1_3_, order0_.status as status2_3_ from orders order0_ inner join customer customer1_ on order0_.customer_id=customer1_.id where customer1_.email=? order by order0_.id desc limit ?
select count(order0_.id) as col_0_0_ from orders order0_ where order0_.status in (? , ?)
insert into order_item (order_id, product_id, quantity, id) values (?, ?, ?, ?)
update order_item set quantity=? where id=? and version=?
delete from order_item where order_id=?
select p1_0.id,p1_0.name,p1_0.price from product p1_0 where p1_0.id=?
select p1_0.id from product p1_0 where p1_0.name like ? escape '!' offset ? rows fetch first ? rows only
SELECT `t1`.`id`, `t1`.`title` FROM `book` AS `t1` WHERE `t1`.`published` > '2020-01-01' ORDER BY `t1`.`id` LIMIT 10 OFFSET 0
INSERT INTO `book` (`title`, `published`) VALUES ('Commit to memory', '2021-05-01')
UPDATE `book` SET `title` = 'Begin again' WHERE `id` = 3
SELECT `book`.`title`, `author`.`name` FROM `book` LEFT OUTER JOIN `author` ON `author`.`id` = `book`.`author_id`
SELECT 1 FROM `users` WHERE `users`.`email` = BINARY 'ann@example.com' LIMIT 1
SELECT meta_value FROM wp_usermeta WHERE user_id = 1 AND meta_key = 'session_tokens'
UPDATE wp_posts SET comment_count = (SELECT COUNT(*) FROM wp_comments WHERE comment_post_ID = 12 AND comment_approved = '1') WHERE ID = 12
SELECT r.rental_id, DATEDIFF(r.return_date, r.rental_date) AS days FROM rental r WHERE r.customer_id = 5
