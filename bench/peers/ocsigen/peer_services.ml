(* The kiln benchmark contract as Eliom services: shared by the ocsigenserver module
   (peer_module.ml) and the standalone executable (../ocsigen-standalone). *)

let text body () () = Lwt.return (body, "text/plain")

let get path =
  Eliom_service.create ~path:(Eliom_service.Path path) ~meth:(Eliom_service.Get Eliom_parameter.unit) ()

(* Eliom only accepts services while a module is being loaded, so this runs from the
   module's initialiser (ocsigenserver) or between begin_load_eliom_module and end_init
   (standalone). *)
let register () =
  Eliom_registration.String.register ~service:(get [ "pong" ]) (text "PONG");
  Eliom_registration.String.register ~service:(get [ "hello" ]) (text "Hello World!")
