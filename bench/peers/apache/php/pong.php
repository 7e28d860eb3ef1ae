<?php
header('Content-Type: text/plain');
echo 'PONG';
