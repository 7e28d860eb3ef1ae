#!/usr/bin/perl
# The Yesod report's bigtable as a CGI program in Perl: one process per request.
# Same page as kiln's /bigtable: rows x cols cells, each its column number.
use strict;
use warnings;

my ($max_rows, $max_cols, $max_cells) = (10_000, 1_000, 100_000);
my %q = map { split /=/, $_, 2 } grep { /=/ } split /&/, ($ENV{QUERY_STRING} // '');
my $rows = $q{rows} // 1000;
my $cols = $q{cols} // 50;
if ($rows !~ /^\d+$/ || $cols !~ /^\d+$/ || $rows > $max_rows || $cols > $max_cols) {
    print "Status: 400 Bad Request\r\nContent-Type: text/plain\r\n\r\n";
    print "bigtable is limited to $max_rows rows and $max_cols columns\n";
    exit 0;
}
my $per_col = $cols || 1;
$rows = int($max_cells / $per_col) if $rows > $max_cells / $per_col;
print "Content-Type: text/html; charset=utf-8\r\n\r\n";
print '<table>', map({ '<tr>' . join('', map { "<td>$_</td>" } 1 .. $cols) . '</tr>' } 1 .. $rows), '</table>';
