-- mysql-a (docker-compose): metadata database and shards s0, s1.
-- Same databases and user as deploy/local/stack.sh creates on MariaDB instance A;
-- deploy/topology.env is the reference (checked by deploy/ci/check-deploy.sh).
CREATE DATABASE IF NOT EXISTS `shortlink_meta` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE DATABASE IF NOT EXISTS `shortlink_s0` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE DATABASE IF NOT EXISTS `shortlink_s1` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER IF NOT EXISTS 'shortlink'@'%' IDENTIFIED BY 'shortlink';
GRANT ALL PRIVILEGES ON *.* TO 'shortlink'@'%';
FLUSH PRIVILEGES;
