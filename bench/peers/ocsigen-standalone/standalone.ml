(* The kiln benchmark peer as one native executable, as the Ocsigen report's first
   deployment was: ocsigenserver, staticmod, Eliom and the contract's services
   (../ocsigen/peer_services.ml) linked together, configured in code rather than by a file.
   Files from STATIC_DIR under /static/, the services everywhere else. Reads PORT,
   STATIC_DIR and RUN_DIR (logs, data and the command pipe). *)

let env name default = try Sys.getenv name with Not_found -> default

let tag name attrs children = Xml.Element (name, attrs, children)

let text name value = tag name [] [ Xml.PCData value ]

(* The <server> section a configuration file would hold: Ocsigen_server.start reads the
   ports, folders and user from it (overriding Ocsigen_config) and builds the sites from
   its <host>. Extensions are linked in: <extension name=...> starts one, it loads nothing. *)
let server ~port ~static ~run =
  [
    text "port" (Printf.sprintf "127.0.0.1:%d" port);
    text "logdir" (Filename.concat run "log");
    text "datadir" (Filename.concat run "data");
    (* The default is under /var/run, which an unprivileged user cannot create. *)
    text "commandpipe" (Filename.concat run "ocsigenserver_command");
    text "mimefile" "/etc/mime.types";
    text "charset" "utf-8";
    tag "extension" [ ("name", "staticmod") ] [];
    tag "extension" [ ("name", "eliom") ] [];
    tag "host"
      [ ("hostfilter", "*"); ("defaulthostname", "127.0.0.1") ]
      [
        tag "site" [ ("path", "static") ] [ tag "static" [ ("dir", static) ] [] ];
        (* A statically linked Eliom module is named, not loaded from a file. *)
        tag "eliom" [ ("name", "kiln-peer") ] [];
      ];
  ]

(* Nothing else names Staticmod, and the linker drops an archive's unnamed modules: this
   keeps it, and with it its registration as the handler of <static>. *)
let _ = Staticmod.extension

let () =
  let port = int_of_string (env "PORT" "8080") in
  let static = env "STATIC_DIR" "static" in
  let run = env "RUN_DIR" "/tmp/ocsigen-standalone" in
  Eliom_service.register_eliom_module "kiln-peer" Peer_services.register;
  Ocsigen_server.start ~config:[ server ~port ~static ~run ] ()
