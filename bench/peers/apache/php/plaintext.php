<?php
header('Content-Type: text/plain');
echo 'Hello, World!';
