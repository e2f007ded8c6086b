-- mysql-b (docker-compose): shards s2, s3.
-- Same databases and user as deploy/local/stack.sh creates on MariaDB instance B.
CREATE DATABASE IF NOT EXISTS `shortlink_s2` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE DATABASE IF NOT EXISTS `shortlink_s3` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER IF NOT EXISTS 'shortlink'@'%' IDENTIFIED BY 'shortlink';
GRANT ALL PRIVILEGES ON *.* TO 'shortlink'@'%';
FLUSH PRIVILEGES;
