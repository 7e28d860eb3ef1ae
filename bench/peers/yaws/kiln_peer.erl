%% Yaws appmod for the kiln benchmark suite: /pong and /hello answered by out/1;
%% /static/ is left to Yaws's own file serving (the docroot links static/ to STATIC_DIR).
-module(kiln_peer).
-export([out/1]).

-include("yaws_api.hrl").

out(#arg{appmoddata = Rest, server_path = Path}) ->
    case {Path, Rest} of
        {"/pong", _} -> {content, "text/plain", <<"PONG">>};
        {"/hello", _} -> {content, "text/plain", <<"Hello World!">>};
        _ -> [{status, 404}, {content, "text/plain", <<>>}]
    end.
