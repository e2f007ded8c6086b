-- mysql-b (docker-compose): shards s2, s3 and the spare fifth shard s4 (MYSQL_SPARE_SHARDS:
-- created empty, not in the ring). Same databases and user as deploy/local/stack.sh creates on
-- MariaDB instance B; deploy/topology.env is the reference (checked by deploy/ci/check-deploy.sh).
CREATE DATABASE IF NOT EXISTS `shortlink_s2` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE DATABASE IF NOT EXISTS `shortlink_s3` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE DATABASE IF NOT EXISTS `shortlink_s4` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER IF NOT EXISTS 'shortlink'@'%' IDENTIFIED BY 'shortlink';
GRANT ALL PRIVILEGES ON *.* TO 'shortlink'@'%';
FLUSH PRIVILEGES;
